import sqlite3

from flask import Flask, request

app = Flask(__name__)


def by_name(name):
    return "SELECT * FROM users WHERE name = '%s'" % name


def run_query(conn, q):
    return conn.execute(q).fetchall()


@app.route("/users")
def users():
    conn = sqlite3.connect("app.db")
    name = request.args.get("name", "")
    cur = conn.cursor()
    cur.execute(f"SELECT * FROM users WHERE name = '{name}'")  # expect
    cur.execute("SELECT * FROM users WHERE id = " + request.form["id"])  # expect
    cur.execute(by_name(name))  # expect
    run_query(conn, "DELETE FROM users WHERE name = '{}'".format(name))  # expect
    return {"rows": cur.fetchall()}
