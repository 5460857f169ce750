import requests
from fastapi import FastAPI
from flask import Flask, abort, request

app = Flask(__name__)
api = FastAPI()
ALLOWED = {"https://api.example.com/status", "https://api.example.com/health"}


@app.route("/preview", methods=["POST"])
def preview():
    url = request.form["url"]
    if url not in ALLOWED:
        abort(400)
    page = requests.get(url, timeout=5)
    return page.text


@api.get("/proxy")
async def proxy(item_id: int):
    resp = requests.get(f"https://api.example.com/items/{int(item_id)}", timeout=5)
    return resp.json()


@app.route("/status")
def status():
    name = request.args.get("service", "")
    return requests.get("https://api.example.com/status", params={"service": name}, timeout=5).text


@api.get("/mirror")
async def mirror(client: ApiClient = Depends(get_client)):
    return requests.get(client.base_url, timeout=5).text
