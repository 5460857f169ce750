import os

from flask import Flask, abort, request, send_file, send_from_directory
from werkzeug.utils import secure_filename

app = Flask(__name__)
BASE = "/srv/uploads"


@app.route("/download")
def download():
    name = secure_filename(request.args.get("name"))
    return send_file(os.path.join(BASE, name))


@app.route("/view/<path:filename>")
def view(filename):
    path = os.path.realpath(os.path.join(BASE, filename))
    if not path.startswith(BASE + os.sep):
        abort(404)
    with open(path) as fh:
        return fh.read()


@app.route("/show")
def show():
    return send_from_directory(BASE, request.args["f"])


@app.route("/base")
def base_name():
    with open(os.path.join(BASE, os.path.basename(request.args["f"]))) as fh:
        return fh.read()
