import html

from django.http import HttpResponse
from django.utils.html import escape
from flask import Flask, request
from markupsafe import Markup

app = Flask(__name__)


@app.route("/search")
def search():
    q = request.args.get("q", "")
    return Markup("<p>Results for %s</p>") % q


def django_search(request):
    q = request.GET.get("q", "")
    return HttpResponse(f"<html><body>{escape(q)}</body></html>")


def plain(request):
    return HttpResponse("<p>%s</p>" % html.escape(request.GET.get("q", "")))
