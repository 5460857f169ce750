from django.http import HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.urls import reverse
from flask import Flask, redirect, request, url_for

app = Flask(__name__)


@app.route("/login", methods=["POST"])
def login():
    nxt = request.args.get("next", "")
    return redirect(url_for("profile", tab=nxt))


def django_login(request):
    nxt = request.GET["next"]
    if not url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
        nxt = "/"
    return HttpResponseRedirect(nxt)


def _allow_redirect(url):
    return url.startswith("/") and not url.startswith("//")


def after_login(request):
    nxt = request.GET.get("next")
    if nxt and _allow_redirect(nxt):
        return redirect(nxt)
    return redirect(reverse("home", args=[request.GET.get("tab", "")]))
