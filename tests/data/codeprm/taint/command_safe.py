import os
import shlex
import subprocess
import sys

from flask import Flask, request

app = Flask(__name__)


def archive(name):
    return subprocess.check_output(["tar", "czf", "out.tgz", name])


@app.route("/ping/<host>")
def ping(host):
    subprocess.run(["ping", "-c", "1", host], check=False)
    return "ok"


@app.route("/archive", methods=["POST"])
def make_archive():
    name = request.form["name"]
    listing = subprocess.run("ls -l " + shlex.quote(name), shell=True, capture_output=True)
    archive(name)
    os.system("uptime")
    return listing.stdout


def main():
    os.popen("grep %d log.txt" % int(sys.argv[1])).read()
