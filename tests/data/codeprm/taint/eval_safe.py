import ast

from flask import Flask, request
from PIL import ImageMath

app = Flask(__name__)

FORMULAS = {"invert": "255 - a", "double": "a * 2"}


@app.route("/calc", methods=["POST"])
def calculate():
    expr = request.json["expr"]
    result = ast.literal_eval(expr)
    name = request.form["formula"]
    if name not in FORMULAS:
        return {"error": "unknown formula"}, 400
    image = ImageMath.eval(FORMULAS[name], a=1)
    return {"result": result, "image": str(image), "value": eval("1 + 2")}
