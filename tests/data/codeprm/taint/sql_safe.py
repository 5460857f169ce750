import sqlite3

from flask import Flask, request

app = Flask(__name__)


def run_query(conn, q, params):
    return conn.execute(q, params).fetchall()


@app.route("/users")
def users():
    conn = sqlite3.connect("app.db")
    name = request.args.get("name", "")
    cur = conn.cursor()
    cur.execute("SELECT * FROM users WHERE name = ?", (name,))
    cur.execute("SELECT * FROM users WHERE id = %s" % int(request.form["id"]))
    run_query(conn, "DELETE FROM users WHERE name = ?", (name,))
    return {"rows": cur.fetchall()}
