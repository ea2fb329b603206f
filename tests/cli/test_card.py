#!/usr/bin/python3
"""zrec card: the dataset card that travels with the data (docs/format.md §13).

- Set and show: --set/--description/--license/--citation (@FILE)/--labels/--vocab write
  ROOT/zrec-card.json, which Python's json reads back as exactly what was given; `card`
  shows it, `--json` holds it; an empty value removes a field, STREAM= a name list,
  --remove the card; keys a newer zrec wrote are kept through an edit; digests do not
  change.
- It travels: recompress and concat of the root copy it byte for byte; a tar export
  writes it beside the shards, and `card NEW --from` puts it on the root append-tar
  rebuilt from them.
- It is used: `cat --format jsonl` of the root adds "cls:name" and "tok:tokens", `info`
  names it (text and --json).
- A lone store keeps its card in its directory; verify and the store reader ignore it.
- --croissant: JSON-LD whose record set names every stream with its dtype and shape,
  whose class names are an enumeration, and whose files carry the sizes and SHA-256
  that Python computes.
- Refusals, one line each and nothing written: a stream the root lacks or that holds no
  integers, an unknown field, --remove with a change, an edit of a URL (exit 2); a
  malformed card (exit 1, naming the file).

Needs: ZREC (path of the zrec binary).
"""
import glob
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402  (tests/cli/case_runner.py)
from cli_helpers import expect, fails, lines_store, must, must_out, require_zrec, tree_digests  # noqa: E402

ZREC = require_zrec("test_card")
CASES, case = case_runner.case_registry()
CLASSES = ["cat", "dog", "bird"]
VOCAB = ["<pad>", "the", "cat", "sat"]


def make_root(d, n=6):
    """A root of __key__, png (bytes), cls (Dense scalar <i8) and tok (Ragged <i8 token IDs, as append-tar --parse ints makes them)."""
    root = os.path.join(d, "ds")
    os.makedirs(root)
    lines_store(os.path.join(root, "__key__"), [b"k%d" % i for i in range(n)])
    pngs = []
    for i in range(n):
        pngs.append(os.path.join(d, "img%d.png" % i))
        with open(pngs[-1], "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n image %d" % i)  # a PNG's signature: the viewer's and Croissant's image
    must(["create", "--ragged", "--ndim", "1", "--dtype", "|u1", os.path.join(root, "png")])
    must(["append-files", os.path.join(root, "png")] + pngs)
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<i8", os.path.join(root, "cls")])
    must(["append-stream", "--parse", "ints", os.path.join(root, "cls")],
         stdin=b"".join(b"%d\n" % (i % 3) for i in range(n)))
    must(["create", "--ragged", "--ndim", "1", "--dtype", "<i8", os.path.join(root, "tok")])
    must(["append-stream", "--parse", "ints", os.path.join(root, "tok")],
         stdin=b"".join(b"1 2 3\n" if i % 2 else b"0 9\n" for i in range(n)))
    must(["adopt", root])
    return root


def names_file(d, name, lines):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def write_card(d, root):
    bib = names_file(d, "cite.bib", ["@misc{ds,", "  title={DS}", "}"])
    _, err = must(["card", root, "--set", "description=Six samples", "--license", "CC-BY-4.0", "--citation",
                   "@" + bib, "--labels", "cls=" + names_file(d, "classes.txt", CLASSES), "--vocab",
                   "tok=" + names_file(d, "vocab.txt", VOCAB)])
    expect("wrote the card of '%s': description, license, citation; labels cls (3); vocab tok (4)" % root in err, err)


WANT = {"zrec_card": 1, "description": "Six samples", "license": "CC-BY-4.0",
        "citation": "@misc{ds,\n  title={DS}\n}", "labels": {"cls": CLASSES}, "vocab": {"tok": VOCAB}}


def card_file(path):
    with open(os.path.join(path, "zrec-card.json"), "rb") as f:
        return f.read()


@case
def set_show_and_edit(d):
    root = make_root(d)
    digest_before = must_out(["digest", root])
    write_card(d, root)
    expect(json.loads(card_file(root)) == WANT, card_file(root))
    shown = must_out(["card", root]).decode()
    expect(shown.splitlines()[:4] == ["root '%s':" % root, "description: Six samples", "license: CC-BY-4.0",
                                       "citation: @misc{ds,"], shown)
    expect("labels cls: 3 classes (cat, dog, bird)\n" in shown and "vocab tok: 4 tokens (<pad>, the, cat, sat)\n" in shown,
           shown)
    j = json.loads(must_out(["card", "--json", root]))
    expect(j["card"] == WANT and j["root"] is True, j)
    expect(must_out(["digest", root]) == digest_before, "a card changed the digest")
    # A key a newer zrec wrote survives an edit; an empty value removes a field.
    text = json.loads(card_file(root))
    text["features"] = {"x": [1, 2]}
    with open(os.path.join(root, "zrec-card.json"), "w") as f:
        json.dump(text, f)
    must(["card", root, "--set", "license=", "--labels", "cls="])
    got = json.loads(card_file(root))
    expect("license" not in got and "labels" not in got and got["features"] == {"x": [1, 2]}, got)
    must(["card", root, "--remove"])
    expect(not os.path.exists(os.path.join(root, "zrec-card.json")), "--remove left the card")
    expect("no card" in must_out(["card", root]).decode(), "shown after --remove")
    expect(json.loads(must_out(["card", "--json", root]))["card"] is None, "--json after --remove")


@case
def it_travels_with_the_data(d):
    root = make_root(d)
    write_card(d, root)
    must(["recompress", "--codec", "raw", root, os.path.join(d, "raw")])
    expect(card_file(os.path.join(d, "raw")) == card_file(root), "recompress lost the card")
    must(["concat", root, os.path.join(d, "raw"), os.path.join(d, "both")])
    expect(card_file(os.path.join(d, "both")) == card_file(root), "concat lost the card")
    out = os.path.join(d, "tars")
    os.makedirs(out)
    _, err = must(["cat", "--format", "tar", "--maxcount", "4", "-o", os.path.join(out, "s-%03d.tar"), root])
    expect("wrote the dataset card to" in err, err)
    expect(card_file(out) == card_file(root), "tar export card")
    fails(["cat", "--format", "tar", "-o", os.path.join(out, "again.tar"), root],
          says=["zrec-card.json' already exists"])
    back = os.path.join(d, "back")
    must(["append-tar", "--parse", "cls=int", "--parse", "tok=ints", back] + sorted(glob.glob(out + "/s-*.tar")))
    must(["card", back, "--from", os.path.join(out, "zrec-card.json")])
    expect(json.loads(card_file(back)) == WANT, card_file(back))


@case
def cat_and_info_use_it(d):
    root = make_root(d)
    write_card(d, root)
    lines = [json.loads(l) for l in must_out(["cat", "--format", "jsonl", root, "0:2"]).splitlines()]
    expect(lines[0]["cls"] == 0 and lines[0]["cls:name"] == "cat" and lines[1]["cls:name"] == "dog", lines)
    expect(lines[0]["tok"] == [0, 9] and lines[0]["tok:tokens"] == ["<pad>", None], lines)
    expect(lines[1]["tok:tokens"] == ["the", "cat", "sat"] and "png:name" not in lines[0], lines)
    info = must_out(["info", root]).decode()
    expect("card (zrec-card.json): description, license, citation; labels cls (3); vocab tok (4)\n" in info, info)
    expect(json.loads(must_out(["info", "--json", root]))["card"] == WANT, "info --json card")


@case
def a_lone_store_keeps_it_inside(d):
    store = os.path.join(d, "st")
    must(["create", "--dense", "--shape", "scalar", "--dtype", "<u1", store])
    must(["append-stream", "--parse", "ints", store], stdin=b"0\n1\n2\n")
    must(["card", store, "--labels", "records=" + names_file(d, "c.txt", CLASSES), "--set", "name=tiny"])
    expect(json.loads(card_file(store))["labels"] == {"records": CLASSES}, card_file(store))
    must(["verify", store])
    expect(must_out(["cat", "--format", "text", store]) == b"0\t0\n1\t1\n2\t2\n", "records after a card")
    fails(["card", store, "--labels", "cls=" + os.path.join(d, "c.txt")], rc_want=2,
          says=["'cls' is not one of the streams (records)"])


@case
def croissant_names_streams_and_files(d):
    root = make_root(d)
    write_card(d, root)
    doc = json.loads(must_out(["card", "--croissant", root]))
    expect(doc["@type"] == "sc:Dataset" and doc["conformsTo"] == "http://mlcommons.org/croissant/1.0", doc.keys())
    expect(doc["@context"]["cr"] == "http://mlcommons.org/croissant/" and doc["license"] == "CC-BY-4.0", doc)
    samples = doc["recordSet"][0]
    fields = {f["name"]: f for f in samples["field"]}
    expect(sorted(fields) == ["__key__", "cls", "png", "tok"], fields.keys())
    expect("<i8" in fields["cls"]["description"] and fields["cls"]["dataType"] == "sc:Integer", fields["cls"])
    expect(fields["png"]["dataType"] == "sc:ImageObject" and fields["png"]["arrayShape"] == "-1", fields["png"])
    expect(fields["tok"]["isArray"] is True and "ndim=1" in fields["tok"]["description"], fields["tok"])
    expect(fields["cls"]["references"]["field"]["@id"] == "cls_classes/index", fields["cls"])
    classes = [r for r in doc["recordSet"] if r["@id"] == "cls_classes"][0]
    expect([row["cls_classes/name"] for row in classes["data"]] == CLASSES, classes)
    files = {f["contentUrl"]: f for f in doc["distribution"] if f["@type"] == "cr:FileObject"}
    on_disk = sorted(os.path.relpath(p, root) for p in glob.glob(root + "/*/*.zr")) + ["zrec-root"]
    expect(sorted(files) == sorted(on_disk), (sorted(files), on_disk))
    for rel, f in files.items():
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
        expect(f["sha256"] == hashlib.sha256(data).hexdigest() and f["contentSize"] == "%d B" % len(data), f)


@case
def refusals_name_the_rule(d):
    root = make_root(d)
    write_card(d, root)
    before = tree_digests(root)
    classes = os.path.join(d, "classes.txt")
    fails(["card", root, "--labels", "nosuch=" + classes], rc_want=2,
          says=["--labels 'nosuch=%s': 'nosuch' is not one of the streams (__key__, cls, png, tok)" % classes])
    fails(["card", root, "--labels", "png=" + classes], rc_want=2,
          says=["stream 'png' holds '|u1' records, and class names name integer labels"])
    fails(["card", root, "--set", "colour=red"], rc_want=2, says=["'colour' is no field of a card"])
    fails(["card", root, "--remove", "--license", "MIT"], rc_want=2, says=["--remove takes the whole card away"])
    fails(["card", "http://127.0.0.1:9/ds", "--license", "MIT"], rc_want=1)
    expect(tree_digests(root) == before, "a refused edit changed the root")
    with open(os.path.join(root, "zrec-card.json"), "w") as f:
        f.write('{"zrec_card": 1, "labels": {"cls": [1, 2]}}')
    fails(["card", root], says=["zrec-card.json': card: not valid at byte", "holds an object of arrays of strings"])
    fails(["card", os.path.join(d, "nothing")], says=["nothing"])


sys.exit(case_runner.run_cases(CASES, "zrec-test-card-"))
