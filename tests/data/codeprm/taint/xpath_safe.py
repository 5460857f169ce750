from lxml import etree
from flask import Flask, request

app = Flask(__name__)
TREE = etree.parse("users.xml")


@app.route("/user")
def user():
    name = request.args["name"]
    found = TREE.xpath("//user[@name=$name]", name=name)
    return {"found": len(found)}
