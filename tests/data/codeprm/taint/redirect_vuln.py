from django.http import HttpResponseRedirect
from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from flask import Flask, redirect, request

app = Flask(__name__)
api = FastAPI()


@app.route("/login", methods=["POST"])
def login():
    nxt = request.args.get("next", "/")
    return redirect(nxt)  # expect


def django_login(request):
    return HttpResponseRedirect(request.GET["next"])  # expect


@api.get("/go")
def go(url: str):
    return RedirectResponse(url)  # expect
