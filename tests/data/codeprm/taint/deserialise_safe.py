import base64
import json

import yaml
from flask import Flask, request

app = Flask(__name__)


@app.route("/restore", methods=["POST"])
def restore():
    blob = base64.b64decode(request.form["state"])
    state = json.loads(blob)
    config = yaml.safe_load(request.data)
    return {"state": state, "config": config}
