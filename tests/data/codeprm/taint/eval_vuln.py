from flask import Flask, request
from PIL import ImageMath

app = Flask(__name__)


def calc(expr):
    return eval(expr)


@app.route("/calc", methods=["POST"])
def calculate():
    expr = request.json["expr"]
    result = eval(expr)  # expect
    exec("total = " + request.form["code"])  # expect
    image = ImageMath.eval(request.form["formula"], a=1)  # expect
    return {"result": result, "other": calc(expr), "image": str(image)}  # expect
