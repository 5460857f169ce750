import os

from flask import Flask

app = Flask(__name__)
DEBUG = os.environ.get("APP_DEBUG") == "1"

if __name__ == "__main__":
    app.run(host="127.0.0.1", debug=False)
