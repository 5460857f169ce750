import ldap
from flask import Flask, request

app = Flask(__name__)


@app.route("/lookup")
def lookup():
    conn = ldap.initialize("ldap://localhost")
    uid = request.args["uid"]
    res = conn.search_s("dc=example,dc=com", ldap.SCOPE_SUBTREE, f"(uid={uid})")  # expect
    return {"n": len(res)}
