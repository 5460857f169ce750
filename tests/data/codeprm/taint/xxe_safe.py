import defusedxml.ElementTree as DET
from lxml import etree
from flask import Flask, request

app = Flask(__name__)
PARSER = etree.XMLParser(resolve_entities=False, no_network=True)


@app.route("/import", methods=["POST"])
def import_xml():
    doc = etree.fromstring(request.data, parser=PARSER)
    other = DET.fromstring(request.data)
    return {"root": doc.tag, "other": other.tag}
