import os

from flask import Flask, request, send_file, send_from_directory

app = Flask(__name__)
BASE = "/srv/uploads"


def read_file(path):
    with open(path) as fh:
        return fh.read()


@app.route("/download")
def download():
    name = request.args.get("name")
    path = os.path.join(BASE, name)
    return send_file(path)  # expect


@app.route("/view/<path:filename>")
def view(filename):
    with open(f"{BASE}/{filename}") as fh:  # expect
        return fh.read()


@app.route("/show")
def show():
    return read_file(BASE + "/" + request.args["f"])  # expect


@app.route("/static-from")
def from_dir():
    return send_from_directory(request.args["dir"], "index.html")  # expect
