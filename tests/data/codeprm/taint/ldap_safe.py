import ldap
from ldap.filter import escape_filter_chars
from flask import Flask, request

app = Flask(__name__)


@app.route("/lookup")
def lookup():
    conn = ldap.initialize("ldap://localhost")
    uid = escape_filter_chars(request.args["uid"])
    res = conn.search_s("dc=example,dc=com", ldap.SCOPE_SUBTREE, f"(uid={uid})")
    return {"n": len(res)}
