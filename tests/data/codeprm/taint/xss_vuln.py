from aiohttp import web
from django.http import HttpResponse
from django.utils.safestring import mark_safe
from fastapi.responses import HTMLResponse
from flask import Flask, request
from markupsafe import Markup

app = Flask(__name__)


@app.route("/search")
def search():
    q = request.args.get("q", "")
    return Markup("<p>Results for %s</p>" % q)  # expect


def django_search(request):
    q = request.GET.get("q", "")
    banner = mark_safe("<b>" + q + "</b>")  # expect
    return HttpResponse(f"<html><body>{q}</body></html>")  # expect


async def fastapi_page(request):
    name = request.query_params["name"]
    return HTMLResponse(content=f"<h1>{name}</h1>")  # expect


async def aiohttp_page(request):
    who = request.match_info["who"]
    return web.Response(text="<p>" + who + "</p>", content_type="text/html")  # expect
