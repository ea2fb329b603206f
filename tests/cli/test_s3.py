#!/usr/bin/python3
"""Stores and roots in S3-compatible buckets (docs/remote.md, "Buckets"), read by
s3:// URL from a real server that checks signatures (moto's, tests/cli/s3_server.py):

- every reading command (info, cat with its selections and formats, digest, verify,
  view's API, recompress / concat / train-dict as sources) gives for s3://BUCKET/PREFIX
  what it gives for the local copy, roots found through their marker;
- credentials come from the chain users expect: AWS_ACCESS_KEY_ID / _SECRET_ACCESS_KEY,
  else a profile (AWS_PROFILE) in AWS_SHARED_CREDENTIALS_FILE, region from
  AWS_CONFIG_FILE; the endpoint from AWS_ENDPOINT_URL or --endpoint-url;
- a wrong secret, an unknown key, a missing bucket or no credentials at all each fail
  with one line naming the cause, and print nothing on stdout; the secret never shows;
- a public bucket reads with --no-sign-request (or AWS_NO_SIGN_REQUEST=true) and no
  credentials, a private one refuses it;
- through a fault proxy in front of the server (web_server.FaultProxy: signed requests
  pass unchanged), 503 SlowDown answers, reset connections and truncated bodies are
  retried and the outputs stay the local copy's; through a link of 25 ms a round trip
  (web_server.SlowLink) too. The answers AWS gives and moto does not (moto neither
  expires session tokens nor checks a signature's region) come from the proxy, as AWS
  words them: an expired session token and a wrong region each fail at once with one line
  naming the cause.

Needs: ZREC (path of the zrec binary), moto_server on PATH with boto3 in its Python,
NumPy (/usr/bin/python3).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import case_runner  # noqa: E402
import view_helpers  # noqa: E402
from cli_helpers import expect, must_out, require_zrec, run_zrec  # noqa: E402
from s3_server import S3Server  # noqa: E402
from web_server import FaultProxy, SlowLink  # noqa: E402

ZREC = require_zrec("test_s3")
CASES, case = case_runner.case_registry()
FIGURES = []


def zrec_ok(args, env):
    rc, out, err = run_zrec(args, env=env)
    expect(rc == 0, "zrec %s: rc %d: %s" % (" ".join(args), rc, err.strip()))
    return out


def zrec_fails(args, env, says):
    rc, out, err = run_zrec(args, env=env)
    expect(rc != 0, "zrec %s succeeded" % " ".join(args))
    expect(out == b"", "zrec %s printed on stdout: %r" % (" ".join(args), out[:200]))
    expect(len(err.strip().splitlines()) == 1, "not one line: " + err)
    for s in says:
        expect(s in err, "zrec %s: %r does not say %r" % (" ".join(args), err.strip(), s))
    return err


def without(d, *keys):
    return {k: v for k, v in d.items() if k not in keys}


def published(d, s3, bucket="zrec-data", public=False):
    """The view test's stores and root, local under d/www and in s3://bucket/www."""
    www = os.path.join(d, "www")
    os.makedirs(www)
    stores = view_helpers.make_stores(www)
    s3.make_bucket(bucket, public=public)
    s3.upload_tree(www, bucket, "www")
    return www, stores


@case
def every_reading_command_reads_a_bucket_as_its_local_copy(d):
    with S3Server() as s3:
        www, s = published(d, s3)
        env = s3.env()
        requests = 0
        for name in ["images", "tokens", "text", "labels"]:
            local, url = os.path.join(www, name), "s3://zrec-data/www/" + name
            info_l = json.loads(must_out(["info", "--json", "--exact", local]))
            info_r = json.loads(zrec_ok(["info", "--json", "--exact", url], env))
            expect(without(info_r, "path", "remote") == without(info_l, "path"), name + ": info differs")
            requests += info_r["remote"]["requests"]
            for args in ([], ["--format", "raw"], ["--format", "jsonl", "1:7"], ["::3"], ["-1"],
                         ["--sample", "25", "--seed", "4"], ["--shuffle", "--seed", "9"]):
                expect(zrec_ok(["cat", url, *args], env) == must_out(["cat", local, *args]),
                       "%s: cat %s differs" % (name, args))
            expect(zrec_ok(["digest", url], env).split()[0] == must_out(["digest", local]).split()[0], name + ": digest")
            v = json.loads(zrec_ok(["verify", "--json", url], env))
            expect(v["valid"] and v["length"] == info_l["length"], str(v))
        root_l, root_r = s["root"], "s3://zrec-data/www/dataset"
        expect(zrec_ok(["cat", "--format", "tar", root_r], env) == must_out(["cat", "--format", "tar", root_l]),
               "cat --format tar of the root differs")
        info = json.loads(zrec_ok(["info", "--json", root_r], env))
        expect(sorted(info["streams"]) == ["cls", "json", "png"] and info["lengths_agree"], str(info))
        expect(json.loads(zrec_ok(["verify", "--json", root_r], env))["valid"], "verify of the root")
        out = os.path.join(d, "out")
        zrec_ok(["recompress", "--codec", "raw", "s3://zrec-data/www/text", out], env)
        expect(must_out(["digest", out]).split()[0] == must_out(["digest", s["text"]]).split()[0], "recompress")
        # --endpoint-url instead of the environment's endpoint.
        env_no_endpoint = s3.env(AWS_ENDPOINT_URL=None)
        expect(zrec_ok(["--endpoint-url", s3.endpoint, "digest", "s3://zrec-data/www/tokens"], env_no_endpoint)
               .split()[0] == must_out(["digest", s["tokens"]]).split()[0], "--endpoint-url")
        v = view_helpers.ViewServer([root_r], env=env)
        try:
            o = v.json("api/overview", {"path": 0})
            expect([st["name"] for st in o["streams"]] == ["cls", "json", "png"], str(o)[:300])
            status, _, body = v.get("api/record", {"path": 0, "stream": 2, "id": 3})
            expect(status == 200, "view api/record: %d %s" % (status, body[:200]))
        finally:
            v.stop()
        FIGURES.append("4 stores and a root read from a signature-checking S3 server; info --exact: %d requests"
                       % requests)


@case
def credentials_come_from_the_chain_and_failures_say_why(d):
    with S3Server() as s3:
        www, s = published(d, s3)
        url = "s3://zrec-data/www/tokens"
        want = must_out(["digest", s["tokens"]]).split()[0]
        # A profile in a credentials file, the region from a config file.
        creds = os.path.join(d, "credentials")
        with open(creds, "w") as f:
            f.write("[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n"
                    "[zrec]\naws_access_key_id = %s\naws_secret_access_key = %s\n" % (s3.key, s3.secret))
        config = os.path.join(d, "config")
        with open(config, "w") as f:
            f.write("[profile zrec]\nregion = us-east-1\nendpoint_url = %s\n" % s3.endpoint)
        env = s3.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None, AWS_REGION=None, AWS_ENDPOINT_URL=None,
                     AWS_PROFILE="zrec", AWS_SHARED_CREDENTIALS_FILE=creds, AWS_CONFIG_FILE=config)
        expect(zrec_ok(["digest", url], env).split()[0] == want, "a profile's credentials")
        zrec_fails(["digest", url], dict(env, AWS_PROFILE="nosuch"), ["the AWS profile 'nosuch' (AWS_PROFILE)"])
        err = zrec_fails(["info", url], s3.env(AWS_SECRET_ACCESS_KEY="wrong-secret"),
                         ["cannot open 's3://zrec-data/www/tokens/meta.zr'", "HTTP 403", "SignatureDoesNotMatch"])
        expect("wrong-secret" not in err and s3.secret not in err, err)
        zrec_fails(["info", url], s3.env(AWS_ACCESS_KEY_ID="AKIANOSUCHKEY0000000"), ["HTTP 403", "InvalidAccessKeyId"])
        zrec_fails(["cat", "s3://no-such-bucket/www/tokens"], s3.env(), ["NoSuchBucket"])
        zrec_fails(["info", url], s3.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None),
                   ["no AWS credentials to sign requests", "--no-sign-request"])
        zrec_fails(["info", url], s3.env(AWS_SECRET_ACCESS_KEY=None),
                   ["AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together"])
        # A private bucket refuses an unsigned request. (Its meta.zr answers 403, taken as
        # "no store here", and the root marker probed next makes moto answer 500 while
        # its signature checks are on: s3_server.py.)
        zrec_fails(["--no-sign-request", "digest", url], s3.env(), ["cannot open 's3://zrec-data/www/tokens/", "HTTP"])
        # Writers refuse a bucket URL, as any URL.
        rc, _, err = run_zrec(["append-npy", url, "-"], env=s3.env())
        expect(rc != 0 and "is a URL" in err, "append-npy to s3://: %d %s" % (rc, err))


@case
def a_public_bucket_reads_without_credentials(d):
    # moto refuses anonymous reads while it checks signatures (s3_server.py): this server
    # does not, and zrec must read it with no credentials at all.
    with S3Server(checks_signatures=False) as s3:
        www, s = published(d, s3, bucket="zrec-public", public=True)
        env = s3.env(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None)
        for args in (["--no-sign-request"], []):
            e = env if args else dict(env, AWS_NO_SIGN_REQUEST="true")
            expect(zrec_ok(args + ["digest", "s3://zrec-public/www/labels"], e).split()[0] ==
                   must_out(["digest", s["labels"]]).split()[0], "a public bucket, unsigned %s" % args)


SLOW_DOWN = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
             b"<Message>Please reduce your request rate.</Message></Error>")


def aws_refusals(path, headers):
    """What AWS S3 answers and moto does not: an expired session token, a request signed
    for another region than the bucket's (us-east-1)."""
    def error(code, message):
        return (400, ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message>"
                      "</Error>" % (code, message)).encode())
    if headers.get("x-amz-security-token") == "an-expired-token":
        return error("ExpiredToken", "The provided token has expired.")
    region = headers.get("Authorization", "").split("Credential=")[-1].split("/")[2:3]
    if region and region[0] != "us-east-1":
        return error("AuthorizationHeaderMalformed", "The authorization header is malformed; the region '%s' is "
                     "wrong; expecting 'us-east-1'" % region[0])
    return None


@case
def faults_and_latency_are_ridden_out_and_refusals_name_the_cause(d):
    with S3Server() as s3:
        www, s = published(d, s3)
        url = "s3://zrec-data/www/tokens"
        want = must_out(["digest", s["tokens"]]).split()[0]
        want_cat = must_out(["cat", s["tokens"], "--sample", "40", "--seed", "2"])
        with FaultProxy(s3.port) as proxy:
            env = s3.env(AWS_ENDPOINT_URL=proxy.url)
            for fault in ("error_every", "reset_every", "drop_every"):
                proxy.error_every = proxy.reset_every = proxy.drop_every = 0
                proxy.error_status, proxy.error_body = 503, SLOW_DOWN
                proxy.clear_faults()
                setattr(proxy, fault, 3)
                injected = proxy.injected
                info = json.loads(zrec_ok(["info", "--json", "--exact", url], env))
                # (zrec's own retries may be none for a reset: libcurl itself retries a
                # request whose kept-alive connection was reset before any answer.)
                expect(proxy.injected > injected, "%s: no fault was injected: %s" % (fault, info["remote"]))
                expect(fault == "reset_every" or info["remote"]["retries"] > 0,
                       "%s: no retries: %s" % (fault, info["remote"]))
                expect(zrec_ok(["digest", url], env).split()[0] == want, fault + ": digest differs")
                expect(zrec_ok(["cat", url, "--sample", "40", "--seed", "2"], env) == want_cat,
                       fault + ": cat --sample differs")
            proxy.error_every = proxy.reset_every = proxy.drop_every = 0
            proxy.answer = aws_refusals
            before = proxy.requests
            zrec_fails(["digest", url], dict(env, AWS_SESSION_TOKEN="an-expired-token"),
                       ["cannot open 's3://zrec-data/www/tokens/", "HTTP 400", "ExpiredToken",
                        "The provided token has expired"])
            expect(proxy.requests - before <= 2, "an expired token was retried: %d requests"
                   % (proxy.requests - before))
            zrec_fails(["digest", url], dict(env, AWS_REGION="eu-west-1"),
                       ["HTTP 400", "AuthorizationHeaderMalformed", "the region 'eu-west-1' is wrong"])
        with SlowLink(s3.port, 0.025) as link:
            expect(zrec_ok(["digest", url], s3.env(AWS_ENDPOINT_URL=link.url)).split()[0] == want,
                   "digest over a 25 ms link")
        FIGURES.append("503 SlowDown, resets and truncated bodies ridden out; ExpiredToken and a wrong region "
                       "refused in one line each")


if __name__ == "__main__":
    sys.exit(case_runner.run_cases(CASES, "zrec-s3-", figures=FIGURES))
