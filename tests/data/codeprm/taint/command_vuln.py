import os
import subprocess
import sys

from flask import Flask, request

app = Flask(__name__)


def archive(name):
    return subprocess.check_output("tar czf out.tgz " + name, shell=True)


@app.route("/ping/<host>")
def ping(host):
    os.system("ping -c 1 " + host)  # expect
    return "ok"


@app.route("/archive", methods=["POST"])
def make_archive():
    name = request.form["name"]
    cmd = "ls -l %s" % name
    listing = subprocess.run(cmd, shell=True, capture_output=True)  # expect
    archive(name)  # expect
    return listing.stdout


def main():
    os.popen(f"grep {sys.argv[1]} log.txt").read()  # expect
