import logging
import traceback

from flask import Flask, jsonify

app = Flask(__name__)
log = logging.getLogger(__name__)


@app.route("/run")
def run():
    try:
        return do_work()
    except Exception:
        log.error("work failed: %s", traceback.format_exc())
        return jsonify({"error": "internal error"}), 500
