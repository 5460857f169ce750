import traceback

from flask import Flask, jsonify

app = Flask(__name__)


@app.route("/run")
def run():
    try:
        return do_work()
    except Exception:
        return jsonify({"error": traceback.format_exc()}), 500  # expect


@app.route("/other")
def other():
    try:
        return do_work()
    except Exception:
        details = traceback.format_exc()
        return "<pre>" + details + "</pre>"  # expect
