from flask import Flask, make_response

app = Flask(__name__)
app.config["SESSION_COOKIE_HTTPONLY"] = False  # expect
SESSION_COOKIE_HTTPONLY = False  # expect


@app.route("/remember")
def remember():
    resp = make_response("ok")
    resp.set_cookie("token", "abc", httponly=False)  # expect
    return resp
