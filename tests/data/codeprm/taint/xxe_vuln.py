from lxml import etree
from flask import Flask, request

app = Flask(__name__)


@app.route("/import", methods=["POST"])
def import_xml():
    doc = etree.fromstring(request.data)  # expect
    return {"root": doc.tag}
