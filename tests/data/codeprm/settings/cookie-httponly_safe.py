from flask import Flask, make_response

app = Flask(__name__)
app.config["SESSION_COOKIE_HTTPONLY"] = True
SESSION_COOKIE_HTTPONLY = True


@app.route("/remember")
def remember():
    resp = make_response("ok")
    resp.set_cookie("token", "abc", httponly=True, secure=True, samesite="Lax")
    return resp
