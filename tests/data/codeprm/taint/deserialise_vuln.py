import base64
import pickle

import yaml
from flask import Flask, request

app = Flask(__name__)


def load_state(blob):
    return pickle.loads(blob)


@app.route("/restore", methods=["POST"])
def restore():
    blob = base64.b64decode(request.form["state"])
    state = pickle.loads(blob)  # expect
    config = yaml.load(request.data, Loader=yaml.Loader)  # expect
    return {"state": state, "config": config, "other": load_state(request.get_data())}  # expect
