#!/usr/bin/env python3
"""zrec view in a real browser: headless Chromium (Debian's chromium + chromium-driver,
driven by python3-selenium) opens the page on the four stores of view_helpers.make_stores
(a Dense image store, a Ragged token store, a zstd_dict text store, an append-tar root
with --keys) and checks the DOM:

- images: one thumbnail per record, each decoded by the browser at the record's own size
  (naturalWidth x naturalHeight), for the PNGs the server encodes and for the PNG bytes
  a tar member holds;
- the overview's histograms are drawn (SVG bars), heavy-tailed sizes on a log scale
  with p50/p99 labels that do not overlap, and its percentile table holds what
  `zrec info --json` says;
- a label's text (the cls stream), a key from --keys, a pretty-printed JSON record, and a
  NumPy-style summary with its sparkline;
- the sample's rows are exactly the IDs of `zrec cat --sample N --seed K`;
- one record's page: its hex view on demand, its .npy link;
- verify runs from the page and reports the store valid;
- class names from a root's dataset card (no --labels) in the grid; a click on a label
  bar filters the grid to that class (a chip clears it); the search box finds a key;
- a remote store's page says its sizes are sampled from its table;
- the root again, served by nginx and read by URL (docs/remote.md): its keys, pictures
  and verify;
- the browser's console holds no error (a failed load, a CSP violation, a script error).

Screenshots go to $ZREC_VIEW_SCREENSHOTS, or else view-screenshots/ next to the zrec
binary (build/view-screenshots/ in a build tree); the test prints where. docs/view.png
in the README is the root's page, taken here.

Usage: ZREC=build/zrec /usr/bin/python3 tests/cli/test_view_browser.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_helpers import expect, must, must_out, require_zrec  # noqa: E402
from view_helpers import ViewServer, make_stores  # noqa: E402
from web_server import WebServer  # noqa: E402

ZREC = require_zrec("test_view_browser")


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="zrec-view-chromium.")
    # As root and with no network: no sandbox (it needs user namespaces), no GPU, nothing
    # that phones home, a profile of its own.
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1280,900", "--user-data-dir=" + profile):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                              options=options)
    driver.set_page_load_timeout(30)
    return driver, profile


def wait(driver, script, timeout=20, what="the page"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = driver.execute_script(script)
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (%s)" % (what, script))


def open_page(driver, url, fragment):
    driver.execute_script("document.body && (document.body.dataset.ready = 'no')")
    driver.get(url + "#" + fragment)
    wait(driver, "return document.body.dataset.ready === 'yes'", what=fragment)
    # Every image loaded (or failed: a failure shows in naturalWidth 0 and the console).
    wait(driver, "return [...document.images].every(i => i.complete)", what="images of " + fragment)


def row_ids(driver):
    return [int(x) for x in driver.execute_script(
        "return [...document.querySelectorAll('#rows .row[data-id]')].map(r => r.dataset.id)")]


def images(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('img.thumb, img.full')].map(i => [i.naturalWidth, i.naturalHeight])")


def texts(driver, selector):
    return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)",
                                 selector)


def main():
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    root = tempfile.mkdtemp(prefix="zrec-view-browser.")
    shots = os.environ.get("ZREC_VIEW_SCREENSHOTS") or os.path.join(os.path.dirname(ZREC), "view-screenshots")
    os.makedirs(shots, exist_ok=True)
    server = driver = profile = None
    checks = 0
    try:
        s = make_stores(root)
        s["many"] = os.path.join(root, "many")
        must(["create", "--ragged", "--dtype", "|u1", "--ndim", "1", s["many"]])
        must(["append-stream", s["many"]], stdin=b"".join(b"line %d\n" % i for i in range(3000)))
        server = ViewServer([s["images"], s["tokens"], s["text"], s["root"], s["labels"]],
                            ["--keys", "", "--keys", "", "--keys", "", "--keys", s["keys"],
                             "--labels", "labels=" + s["classes"]])
        driver, profile = browser()
        url = server.url

        # The Dense image store: 12 pictures of 32x24, histograms, info's percentiles.
        open_page(driver, url, "p=0")
        got = images(driver)
        expect(got == [[32, 24]] * 12, "image store: thumbnails %s, want 12 of 32x24" % got)
        bars = driver.execute_script("return document.querySelectorAll('svg.histogram').length")
        expect(bars >= 2, "image store: %d histograms drawn, want stored and logical" % bars)
        info = json.loads(must_out(["info", "--json", s["images"]]))
        cells = texts(driver, "table.stats tbody tr:nth-child(1) td")
        want = [str(info["record_sizes"]["stored"][k]) for k in ("min", "p50", "p99", "max")]
        expect(cells == want, "image store: stored percentiles %s, want info's %s" % (cells, want))
        driver.save_screenshot(os.path.join(shots, "images.png"))
        checks += 3

        # The token store: a seeded sample is cat --sample's IDs; a summary and a sparkline.
        open_page(driver, url, "p=1&sample=9&seed=5&limit=9")
        ids = [int(x) for x in driver.execute_script(
            "return [...document.querySelectorAll('#rows .row[data-id]')].map(r => r.dataset.id)")]
        lines = must_out(["cat", s["tokens"], "--sample", "9", "--seed", "5", "--format", "jsonl", "--with-ids"])
        want = [json.loads(line)["id"] for line in lines.decode().splitlines()]
        expect(ids == want, "sample IDs %s, want cat --sample's %s" % (ids, want))
        open_page(driver, url, "p=1&sel=0:3")
        first = texts(driver, "#rows .row[data-id] pre.cell-text")[0]
        expect(first == "[0 1 2 ... 1997 1998 1999]", "token record 0 shown as %r" % first)
        spark = driver.execute_script("return document.querySelectorAll('svg.sparkline polyline').length")
        expect(spark == 3, "token store: %d sparklines, want 3" % spark)
        # Token counts from 1 to ~3000: heavy-tailed sizes on a log scale, quantile labels apart.
        scales = driver.execute_script(
            "return [...document.querySelectorAll('svg.histogram')].map(s => s.dataset.scale)")
        expect("log" in scales, "token store: histogram scales %s, want a log one" % scales)
        overlaps = driver.execute_script("""
            return [...document.querySelectorAll('svg.histogram')].filter(s => {
              const r = [...s.querySelectorAll('text.marker-label')].map(t => t.getBoundingClientRect());
              return r.length === 2 && r[0].left < r[1].right && r[1].left < r[0].right &&
                     r[0].top < r[1].bottom && r[1].top < r[0].bottom;
            }).length""")
        expect(overlaps == 0, "token store: %d histograms with overlapping p50/p99 labels" % overlaps)
        checks += 2
        driver.save_screenshot(os.path.join(shots, "tokens.png"))
        checks += 3

        # The zstd_dict text store: plain text and pretty JSON, HTML in a record stays text.
        open_page(driver, url, "p=2&limit=3")
        shown = texts(driver, "#rows .row[data-id] pre.cell-text")
        expect(shown[0] == s["text_data"][0], "text record 0 shown as %r" % shown[0])
        expect(shown[1] == json.dumps(json.loads(s["text_data"][1]), indent=2),
               "JSON record 1 shown as %r" % shown[1])
        scripts = driver.execute_script("return document.querySelectorAll('main script').length")
        expect(scripts == 0, "a record's <script> became an element")
        checks += 3

        # The append-tar root: keys, labels and pictures side by side.
        open_page(driver, url, "p=3")
        keys = texts(driver, "#rows .row .key")
        expect(keys == [x["key"] for x in s["root_data"]], "root keys %s" % keys)
        labels = driver.execute_script(
            "return [...document.querySelectorAll('#rows .row[data-id]')].map(r => r.querySelectorAll('.cell')[0].querySelector('pre').textContent)")
        expect(labels == [str(i % 2) for i in range(10)], "cls labels shown as %s" % labels)
        got = images(driver)
        want = [[20, 16 + i] for i in range(10)]
        expect(got == want, "root pictures %s, want %s" % (got, want))
        driver.save_screenshot(os.path.join(shots, "dataset.png"))
        backdrop = driver.execute_script("return getComputedStyle(document.querySelector('img.thumb')).backgroundImage")
        expect("conic-gradient" in backdrop, "pictures have no checkerboard under them: %r" % backdrop)
        checks += 4

        # One record: the hex view on demand, the .npy link.
        open_page(driver, url, "p=1&stream=0&id=5")
        driver.execute_script("[...document.querySelectorAll('button')].find(b => b.textContent.startsWith('Show stored')).click()")
        hexdump = wait(driver, "return document.querySelector('pre.hexdump').textContent", what="the hex view")
        expect(hexdump.startswith("00000000  28 b5 2f fd"), "hex view starts %r, want a zstd frame" % hexdump[:40])
        link = driver.execute_script("return document.querySelector('a.download').getAttribute('href')")
        expect(link == "api/npy?path=1&stream=0&id=5", "download link %r" % link)
        driver.save_screenshot(os.path.join(shots, "record.png"))
        checks += 2

        # A label stream: a bar per value, named from --labels, and the counts.
        open_page(driver, url, "p=4")
        names = texts(driver, "svg.values text.value-label")
        expect(names == ["cat", "dog"], "value labels %s" % names)
        counts = driver.execute_script(
            "return [...document.querySelectorAll('table.value-counts tbody tr')].map(r => [...r.cells].map(c => c.textContent))")
        expect(counts == [["0", "cat", "10"], ["1", "dog", "20"]], "value counts %s" % counts)
        driver.save_screenshot(os.path.join(shots, "labels.png"))
        checks += 2

        # Class names from the root's dataset card (zrec card --labels; no view --labels) in
        # the grid; a click on a value's bar filters the grid to it, with a chip that clears
        # it; the search box finds a sample by its key.
        # The same tar with its .cls members parsed as integers: a label stream.
        labelled, labelled_keys = os.path.join(root, "labelled"), os.path.join(root, "labelled.keys")
        must(["append-tar", "--parse", "cls=int", "--keys", labelled_keys, labelled, os.path.join(root, "shard.tar")])
        must(["card", labelled, "--labels", "cls=" + s["classes"]])
        carded = ViewServer([labelled], ["--keys", labelled_keys])
        try:
            open_page(driver, carded.url, "p=0")
            names = texts(driver, "#rows .row[data-id] .label-name")
            want = [x["label"] for x in s["root_data"]]
            expect(names == want, "class names in the grid %s, want the card's %s" % (names, want))
            driver.execute_script("document.querySelectorAll('details.store')[0].open = true")
            bar = driver.find_element(By.CSS_SELECTOR, "svg.values rect.bar[data-value='1']")
            driver.execute_script("document.body.dataset.ready = 'no'")
            bar.click()
            wait(driver, "return location.hash.includes('label=') && document.body.dataset.ready === 'yes'",
                 what="the grid filtered by the bar")
            ids = row_ids(driver)
            want = [i for i, x in enumerate(s["root_data"]) if x["label"] == "dog"]
            expect(ids == want, "a click on dog's bar shows %s, want %s" % (ids, want))
            chip = texts(driver, ".chip")
            expect(len(chip) == 1 and chip[0].startswith("filtered: cls = dog"), "filter chip %s" % chip)
            driver.save_screenshot(os.path.join(shots, "filtered.png"))
            driver.execute_script("document.body.dataset.ready = 'no'")
            driver.find_element(By.CSS_SELECTOR, ".chip-clear").click()
            wait(driver, "return !location.hash.includes('label=') && document.body.dataset.ready === 'yes'",
                 what="the filter cleared")
            expect(row_ids(driver) == list(range(10)), "after clearing the filter: %s" % row_ids(driver))
            box = driver.find_element(By.CSS_SELECTOR, "input[name='q']")
            box.send_keys("Sample_007")
            driver.execute_script("document.body.dataset.ready = 'no'")
            box.send_keys(Keys.ENTER)
            wait(driver, "return location.hash.includes('q=') && document.body.dataset.ready === 'yes'",
                 what="the search")
            expect(row_ids(driver) == [7], "search for Sample_007 shows %s" % row_ids(driver))
            chip = texts(driver, ".chip")
            expect(chip and chip[0].startswith('filtered: search "Sample_007"'), "search chip %s" % chip)
            checks += 5
        finally:
            carded.stop()

        # Verify from the page.
        open_page(driver, url, "p=2")
        driver.execute_script("document.querySelector('button.verify-button').click()")
        verdict = wait(driver, "const p = document.querySelector('.verify .ok, .verify .error'); return p && p.textContent",
                       what="verify")
        expect(verdict == "valid: 60 records decoded", "verify said %r" % verdict)
        checks += 1

        # The root again, served by nginx and read by URL (docs/remote.md): the same page.
        with WebServer(root) as web:
            remote = ViewServer([web.http + "/" + os.path.basename(s["root"])], ["--keys", s["keys"]])
            try:
                open_page(driver, remote.url, "p=0")
                keys = texts(driver, "#rows .row .key")
                expect(keys == [x["key"] for x in s["root_data"]], "remote root keys %s" % keys)
                got = images(driver)
                expect(got == [[20, 16 + i] for i in range(10)], "remote root pictures %s" % got)
                driver.save_screenshot(os.path.join(shots, "dataset-remote.png"))
                driver.execute_script("document.querySelector('button.verify-button').click()")
                verdict = wait(driver, "const p = document.querySelector('.verify .ok, .verify .error'); "
                                       "return p && p.textContent", what="verify of the remote root")
                expect(verdict.startswith("valid"), "verify of the remote root said %r" % verdict)
                checks += 3
            finally:
                remote.stop()
            # A remote store's sizes come from a sample of its table: the page says so.
            remote = ViewServer([web.http + "/" + os.path.basename(s["many"])])
            try:
                open_page(driver, remote.url, "p=0")
                note = texts(driver, "p.sampled")
                expect(len(note) == 1 and "2048 of the 3000 records" in note[0], "sampled note %s" % note)
                checks += 1
            finally:
                remote.stop()

        problems = [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]
        expect(not problems, "the browser's console: %s" % problems)
        checks += 1
        print("figure: view browser: %d checks on 5 stores in %s; screenshots in %s"
              % (checks, subprocess.run([shutil.which("chromium") or "chromium", "--version"], capture_output=True,
                                        text=True).stdout.strip() or "chromium", shots))
        print("PASS: view browser")
    finally:
        if driver is not None:
            driver.quit()
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
        if profile:
            shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
