import importlib
import json

from flask import Flask, request

app = Flask(__name__)
PLUGINS = {"csv", "json", "xml"}


@app.route("/plugin")
def load_plugin():
    name = request.args["plugin"]
    if name not in PLUGINS:
        return "unknown plugin", 404
    module = importlib.import_module("plugins." + name)
    return module.run()


@app.route("/hook", methods=["POST"])
def save_hook():
    code = request.form["code"]
    with open("hooks/custom_hook.json", "w") as fh:
        fh.write(json.dumps({"code": code}))
    return "saved"
