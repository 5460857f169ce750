from lxml import etree
from flask import Flask, request

app = Flask(__name__)


@app.route("/import", methods=["POST"])
def import_xml():
    doc = etree.fromstring(request.data)  # expect
    return {"root": doc.tag}


@app.route("/report", methods=["POST"])
def report():
    xml_bytes = request.get_json()["report"].encode("utf-8")
    parser = etree.XMLParser(resolve_entities=True)
    root = etree.fromstring(xml_bytes, parser=parser)  # expect
    return {"root": root.tag}
