from django.http import HttpResponse
from flask import Flask, Response, make_response, request

app = Flask(__name__)


@app.route("/download")
def download():
    name = request.args.get("name", "file.txt")
    resp = make_response("data")
    resp.headers["Content-Disposition"] = "attachment; filename=" + name  # expect
    return resp


@app.route("/lang")
def lang():
    return Response("ok", headers={"Content-Language": request.args["lang"]})  # expect


def django_view(request):
    response = HttpResponse("ok")
    response["X-Trace"] = request.GET.get("trace", "")  # expect
    return response
