import importlib

from flask import Flask, request

app = Flask(__name__)


@app.route("/plugin")
def load_plugin():
    name = request.args["plugin"]
    module = importlib.import_module("plugins." + name)  # expect
    other = __import__(request.args["extra"])  # expect
    return module.run() + other.run()


@app.route("/hook", methods=["POST"])
def save_hook():
    code = request.form["code"]
    with open("hooks/custom_hook.py", "w") as fh:
        fh.write("def hook():\n    " + code + "\n")  # expect
    return "saved"
