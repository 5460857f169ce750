from django.http import HttpResponse
from flask import Flask, Response, make_response, request

app = Flask(__name__)
LANGS = {"en", "fr", "de"}


@app.route("/download")
def download():
    name = request.args.get("name", "file.txt")
    resp = make_response("data")
    resp.headers["Content-Disposition"] = "attachment"
    resp.headers["X-Count"] = str(int(request.args.get("n", "0")))
    return resp


@app.route("/lang")
def lang():
    value = request.args["lang"]
    if value not in LANGS:
        value = "en"
    return Response("ok", headers={"Content-Language": value})


def django_view(request):
    response = HttpResponse("ok")
    response["X-Frame-Options"] = "DENY"
    return response
