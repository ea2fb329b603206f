"""A real S3-compatible server for the bucket tests: moto's server (`moto_server`) on
loopback with its signature checks on. moto accepts any signature until told otherwise;
INITIAL_NO_AUTH_ACTION_COUNT=N makes it check every request after the first N, against
access keys that its IAM holds. The first requests make such a key (an IAM user with a
policy that allows everything); from then on a request signed with a wrong secret, an
unknown key or no signature at all is refused as AWS refuses it.

    with S3Server() as s3:             # s3.endpoint, s3.key, s3.secret
        s3.make_bucket("data")
        s3.upload_tree("/tmp/www/ds", "data", "ds")   # s3://data/ds/...
        env = s3.env()                 # AWS_* variables that point zrec at it

Setup and uploads go through boto3 in the Python that runs moto_server (moto depends
on it), not Debian's /usr/bin/python3: zrec itself is what the tests check.
Needs: moto_server on PATH (with the boto3 of its Python).
"""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import textwrap

from web_server import free_port, stop_server, wait_listening

SETUP = textwrap.dedent("""
    import boto3, json, sys
    endpoint = sys.argv[1]
    iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1",
                       aws_access_key_id="setup", aws_secret_access_key="setup")
    iam.create_user(UserName="zrec")
    key = iam.create_access_key(UserName="zrec")["AccessKey"]
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_user_policy(UserName="zrec", PolicyName="all", PolicyDocument=json.dumps(policy))
    print(json.dumps({"key": key["AccessKeyId"], "secret": key["SecretAccessKey"]}))
""")

CLIENT = textwrap.dedent("""
    import boto3, json, os, sys
    args = json.loads(sys.argv[1])
    s3 = boto3.client("s3", endpoint_url=args["endpoint"], region_name="us-east-1",
                      aws_access_key_id=args["key"], aws_secret_access_key=args["secret"])
    if args["op"] == "bucket":
        s3.create_bucket(Bucket=args["bucket"])
        if args.get("public"):
            s3.put_bucket_policy(Bucket=args["bucket"], Policy=json.dumps({"Version": "2012-10-17", "Statement": [
                {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                 "Resource": "arn:aws:s3:::%s/*" % args["bucket"]}]}))
    elif args["op"] == "upload":
        for d, _, files in os.walk(args["dir"]):
            for f in files:
                path = os.path.join(d, f)
                key = args["prefix"] + "/" + os.path.relpath(path, args["dir"])
                s3.upload_file(path, args["bucket"], key)
""")


def find_moto():
    """(moto_server, the Python it runs with): from PATH, else from a pyenv install
    (where this kind of machine has it, whether or not pyenv's shims are on PATH)."""
    candidates = []
    on_path = shutil.which("moto_server")
    if on_path:
        for name in ("python3", "python"):
            exe = shutil.which(name)
            if exe:
                candidates.append((on_path, exe))
    for bin_dir in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/*/bin")), reverse=True):
        if os.path.exists(os.path.join(bin_dir, "moto_server")):
            candidates.append((os.path.join(bin_dir, "moto_server"), os.path.join(bin_dir, "python3")))
    for moto, python in candidates:
        if subprocess.run([python, "-c", "import moto, boto3"], capture_output=True).returncode == 0:
            return moto, python
    raise RuntimeError("no moto_server with boto3 beside it, on PATH or under ~/.pyenv/versions "
                       "(the S3 tests need moto's server)")


class S3Server:
    """checks_signatures=False: moto as it starts, taking any request signed or not. An
    anonymous GET of a public bucket needs that: moto 5.2 answers it with a 500 while
    its signature checks are on."""

    def __init__(self, checks_signatures=True):
        self.checks_signatures = checks_signatures
        self.work = tempfile.mkdtemp(prefix="zrec-moto-")
        self.port = free_port()
        self.endpoint = "http://127.0.0.1:%d" % self.port
        self.proc = None

    def __enter__(self):
        moto, self.python = find_moto()
        env = dict(os.environ)
        if self.checks_signatures:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
        self.proc = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(self.port)], env=env,
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.work, "moto.log"), "w"))
        try:
            wait_listening(self.port, timeout=30)
            out = subprocess.run([self.python, "-c", SETUP, self.endpoint], check=True, capture_output=True,
                                 text=True).stdout
        except Exception:
            self.__exit__(None, None, None)
            raise
        creds = json.loads(out)
        self.key, self.secret = creds["key"], creds["secret"]
        return self

    def _client(self, **args):
        args.update(endpoint=self.endpoint, key=self.key, secret=self.secret)
        subprocess.run([self.python, "-c", CLIENT, json.dumps(args)], check=True, capture_output=True)

    def make_bucket(self, bucket, public=False):
        self._client(op="bucket", bucket=bucket, public=public)

    def upload_tree(self, directory, bucket, prefix):
        self._client(op="upload", dir=directory, bucket=bucket, prefix=prefix)

    def uploads_open(self, bucket):
        """Whether `bucket` holds a multipart upload begun and neither completed nor aborted."""
        code = ("import boto3,sys; c=boto3.client('s3',endpoint_url=sys.argv[1],region_name='us-east-1',"
                "aws_access_key_id=sys.argv[2],aws_secret_access_key=sys.argv[3])\n"
                "print(len(c.list_multipart_uploads(Bucket=sys.argv[4]).get('Uploads', [])))")
        out = subprocess.run([self.python, "-c", code, self.endpoint, self.key, self.secret, bucket],
                             capture_output=True, text=True)
        return out.stdout.strip() not in ("", "0")

    def env(self, **overrides):
        """The environment of a zrec that reads this server with the test's key."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(AWS_ACCESS_KEY_ID=self.key, AWS_SECRET_ACCESS_KEY=self.secret, AWS_ENDPOINT_URL=self.endpoint,
                   AWS_REGION="us-east-1", AWS_CONFIG_FILE="/nonexistent", AWS_SHARED_CREDENTIALS_FILE="/nonexistent")
        env.update(overrides)
        return {k: v for k, v in env.items() if v is not None}

    def __exit__(self, *exc):
        stop_server(self.proc, self.work)


def serve(env_file, bucket):
    """For shell tests: starts the server, makes `bucket`, writes `export AWS_...=...`
    lines to env_file (renamed into place whole, so a reader waiting for it sees all of
    them), and serves until stdin closes or SIGTERM comes."""
    import shlex
    import signal
    import sys
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with S3Server() as s3:
        s3.make_bucket(bucket)
        env = s3.env()
        with open(env_file + ".tmp", "w") as f:
            for k, v in sorted(env.items()):
                if k.startswith("AWS_"):
                    f.write("export %s=%s\n" % (k, shlex.quote(v)))
        os.rename(env_file + ".tmp", env_file)
        sys.stdin.read()


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 4 or sys.argv[1] != "serve":
        sys.exit("usage: s3_server.py serve ENV_FILE BUCKET")
    serve(sys.argv[2], sys.argv[3])
