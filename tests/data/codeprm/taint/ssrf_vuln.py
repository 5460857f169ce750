import urllib.request

import aiohttp
import httpx
import requests
from fastapi import FastAPI
from flask import Flask, request

app = Flask(__name__)
api = FastAPI()


def fetch(url):
    return requests.get(url, timeout=5).text


@app.route("/preview", methods=["POST"])
def preview():
    url = request.form["url"]
    page = requests.get(url, timeout=5)  # expect
    with urllib.request.urlopen(request.args["feed"], timeout=5) as resp:  # expect
        body = resp.read()
    return page.text + body.decode() + fetch(url)  # expect


@api.get("/proxy")
async def proxy(target: str):
    async with httpx.AsyncClient() as client:
        resp = await client.get(f"https://{target}/status")  # expect
    return resp.json()


async def hook(request):
    data = await request.json()
    async with aiohttp.ClientSession() as session:
        async with session.post(data["callback"], json={"ok": True}) as resp:  # expect
            return await resp.text()
