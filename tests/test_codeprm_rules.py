"""The analysers (bandit filtered + taint + API rules) on realistic snippets, one idiom per row.

Each vulnerable row must be flagged with its CWE family; each fixed row must come out clean.
The first batch was written with the rules (2026-12-01), before the blind variants f/g and h/i
were seen; the second batch after f/g's one evaluation, the third after j/k's, the fourth after
l/m's, the fifth after n/o's and p/q's, the sixth after r/s's and t/u's, the seventh after w/x's,
the eighth after y/z's and the ninth after aa/ab's (some rows are failures of those variants in other words).
"""
from __future__ import annotations

import pytest

from engines.codeprm.labels import label_findings, rule_findings, taint_findings

VULNERABLE = [
    # 22 path traversal
    (22, "from flask import request, send_file\nimport os\ndef dl():\n    return send_file(os.path.join('/srv/files', request.args['name']))\n"),
    (22, "from flask import request\nUPLOADS = '/srv/up'\ndef up():\n    f = request.files['doc']\n    f.save(UPLOADS + '/' + f.filename)\n"),
    (22, "from pathlib import Path\nfrom fastapi import FastAPI\napp = FastAPI()\nBASE = Path('/data')\n@app.get('/r/{name}')\ndef r(name: str):\n    return (BASE / name).read_text()\n"),
    (22, "import tarfile\ndef unpack(upload_path, dest):\n    with tarfile.open(upload_path) as tar:\n        tar.extractall(dest)\n"),
    # 78 command injection
    (78, "import subprocess\ndef ping(host):\n    return subprocess.run(f'ping -c 1 {host}', shell=True, capture_output=True)\n"),
    (78, "import os\ndef convert(path):\n    os.system('convert ' + path + ' out.png')\n"),
    (78, "import subprocess\ndef log(branch):\n    cmd = 'git log --oneline ' + branch\n    return subprocess.check_output(cmd, shell=True)\n"),
    (78, "import subprocess\ndef run(script_arg):\n    subprocess.run(['bash', '-c', 'backup.sh ' + script_arg])\n"),
    (78, "import os\ndef f(cmd):\n    os.execl('/bin/sh', 'sh', '-c', cmd)\n"),
    (78, "def remote(client, path):\n    client.exec_command(f'ls -la {path}')\n"),
    # 79 XSS
    (79, "from flask import request\ndef hello():\n    name = request.args.get('name', '')\n    return f'<h1>Hello {name}</h1>'\n"),
    (79, "from django.http import HttpResponse\ndef view(request):\n    q = request.GET.get('q', '')\n    return HttpResponse('You searched for ' + q)\n"),
    (79, "from flask import request, make_response\ndef page():\n    body = '<div>' + request.form['comment'] + '</div>'\n    return make_response(body)\n"),
    (79, "from jinja2 import Template\ndef render(name):\n    return Template('<p>Hello {{ name }}</p>').render(name=name)\n"),
    # 89 SQL injection
    (89, "def find(cur, user):\n    cur.execute(f\"SELECT * FROM users WHERE name = '{user}'\")\n    return cur.fetchall()\n"),
    (89, "from sqlalchemy import text\ndef q(session, col):\n    return session.execute(text('SELECT ' + col + ' FROM t'))\n"),
    (89, "import pandas as pd\ndef load(con, region):\n    return pd.read_sql(\"SELECT * FROM sales WHERE region = '%s'\" % region, con)\n"),
    # 94 code injection
    (94, "from flask import request\ndef calc():\n    return str(eval(request.args['expr']))\n"),
    (94, "import importlib\nfrom flask import request\ndef plugin():\n    mod = importlib.import_module(request.args['name'])\n    return mod.run()\n"),
    (94, "import subprocess, sys\ndef run_snippet(code):\n    return subprocess.run([sys.executable, '-c', code], capture_output=True)\n"),
    (94, "from jinja2 import Environment\nfrom flask import request\ndef tpl():\n    return Environment().from_string(request.form['t']).render()\n"),
    # 327 weak crypto / TLS
    (327, "from Crypto.Cipher import AES\ndef enc(key, data):\n    return AES.new(key, AES.MODE_ECB).encrypt(data)\n"),
    (327, "import requests\ndef fetch(url):\n    return requests.get(url, verify=False, timeout=5).text\n"),
    (327, "import ssl\ndef ctx():\n    c = ssl.create_default_context()\n    c.check_hostname = False\n    c.verify_mode = ssl.CERT_NONE\n    return c\n"),
    (327, "import ssl\ndef ctx():\n    c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)\n    c.minimum_version = ssl.TLSVersion.TLSv1\n    return c\n"),
    (327, "from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes\ndef enc(k, iv):\n    return Cipher(algorithms.TripleDES(k), modes.CBC(iv)).encryptor()\n"),
    # 328 weak hash
    (328, "import hashlib\ndef store(password):\n    return hashlib.md5(password.encode()).hexdigest()\n"),
    (328, "import hashlib\ndef store(password, salt):\n    return hashlib.pbkdf2_hmac('sha256', password.encode(), salt, 1000)\n"),
    (328, "import hashlib\ndef store(password):\n    return hashlib.sha256(password.encode()).hexdigest()\n"),
    (328, "from cryptography.hazmat.primitives import hashes\ndef h():\n    return hashes.Hash(hashes.SHA1())\n"),
    # 338 weak randomness
    (338, "import random, string\ndef make_token(n=32):\n    return ''.join(random.choice(string.ascii_letters) for _ in range(n))\n"),
    (338, "import numpy as np\ndef reset_code():\n    return ''.join(map(str, np.random.randint(0, 10, 6)))\n"),
    (338, "import uuid\ndef new_session(user):\n    session_id = uuid.uuid1().hex\n    user.session = session_id\n"),
    # 377 insecure temp file
    (377, "import tempfile, os\ndef lock():\n    path = os.path.join(tempfile.gettempdir(), 'app.lock')\n    open(path, 'w').close()\n"),
    (377, "import tempfile\ndef scratch():\n    name = tempfile.mktemp(suffix='.csv')\n    return open(name, 'w')\n"),
    (377, "def dump(data):\n    with open('/tmp/report.json', 'w') as fh:\n        fh.write(data)\n"),
    # 502 deserialisation
    (502, "import pickle\ndef load(blob):\n    return pickle.loads(blob)\n"),
    (502, "import yaml\ndef cfg(text):\n    return yaml.load(text, Loader=yaml.Loader)\n"),
    (502, "import torch\ndef restore(path):\n    return torch.load(path)\n"),
    (502, "import pandas as pd\ndef restore(path):\n    return pd.read_pickle(path)\n"),
    # 611 XXE
    (611, "import xml.etree.ElementTree as ET\ndef parse(body):\n    return ET.fromstring(body)\n"),
    (611, "from lxml import etree\ndef parse(data):\n    parser = etree.XMLParser(resolve_entities=True)\n    return etree.fromstring(data, parser)\n"),
    # 798 hard-coded credentials
    (798, "import requests\ndef call():\n    return requests.get('https://api.example.com', headers={'Authorization': 'Bearer 9f8e7d6c5b4a3f2e1d'})\n"),
    (798, "import smtplib\ndef send(msg):\n    s = smtplib.SMTP('smtp.example.com')\n    s.login('alerts', 'Sup3rS3cret!')\n"),
    (798, "import os\ndef db():\n    return os.environ.get('DB_PASSWORD', 'hunter2-prod')\n"),
    (798, "from flask import Flask\napp = Flask(__name__)\napp.config['SECRET_KEY'] = 'dev-7c1e9f0a'\n"),
    (798, "import stripe\nstripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'\n"),
    (798, "from sqlalchemy import create_engine\nengine = create_engine('postgresql://admin:pa55word@db.internal/app')\n"),
    (798, "def client(Client):\n    return Client(api_key='a1b2c3d4e5f6g7h8')\n"),
    # 918 SSRF
    (918, "import requests\nfrom flask import request\ndef proxy():\n    return requests.get(request.args['url'], timeout=5).content\n"),
    (918, "import httpx\ndef preview(url):\n    return httpx.get(url).text\n"),
    (918, "import urllib.request\ndef fetch(image_url):\n    return urllib.request.urlopen(image_url).read()\n"),
    # second batch (2026-12-01, after variants f/g were evaluated and became validation data)
    (327, "import requests\nclass Api:\n    def __init__(self):\n        self.http = requests.Session()\n        self.http.verify = False\n"),
    (327, "from Crypto.Cipher import AES\ndef enc(key, data):\n    return AES.new(key, AES.MODE_CBC, iv=b'0000000000000000').encrypt(data)\n"),
    (328, "from werkzeug.security import generate_password_hash\ndef store(pw):\n    return generate_password_hash(pw, method='md5')\n"),
    (328, "from passlib.context import CryptContext\nctx = CryptContext(schemes=['ldap_md5'])\n"),
    (798, "import redis\ncache = redis.from_url('redis://:s3cretpass@cache.internal:6379/0')\n"),
    (918, "import http.client\nfrom flask import request\ndef probe():\n    conn = http.client.HTTPSConnection(request.args['host'])\n    conn.request('GET', '/')\n"),
    (94, "import runpy\nfrom flask import request\ndef run():\n    f = request.files['script']\n    f.save('/srv/jobs/job.py')\n    return runpy.run_path('/srv/jobs/' + f.filename)\n"),
    (611, "import xmltodict\ndef parse(body):\n    return xmltodict.parse(body, disable_entities=False)\n"),
    (22, "from pathlib import Path\nfrom fastapi import APIRouter, HTTPException\nr = APIRouter()\nLOGS = Path('/var/log/app')\n@r.get('/logs')\ndef tail(service: str):\n    p = LOGS.joinpath(service + '.log')\n    if not p.exists():\n        raise HTTPException(404)\n    return p.read_text()\n"),
    # third batch (after j/k's one evaluation)
    (78, "import asyncio, subprocess\nasync def ocr(lang):\n    cmd = 'tesseract in.png out -l ' + lang\n    return await asyncio.to_thread(subprocess.run, cmd, shell=True)\n"),
    (78, "def restart(c, service):\n    return c.sudo(f'systemctl restart {service}')\n"),
    (89, "from sqlalchemy import text\nfrom flask import request\ndef items(q):\n    return q.order_by(text(request.args.get('sort', 'name'))).all()\n"),
    (94, "import tornado.template, tornado.web\nclass H(tornado.web.RequestHandler):\n    def post(self):\n        t = self.get_body_argument('tpl')\n        self.finish(tornado.template.Template(t).generate())\n"),
    (502, "import keras\ndef load(path):\n    return keras.models.load_model(path, safe_mode=False)\n"),
    (502, "from ruamel.yaml import YAML\ndef cfg(text):\n    return YAML(typ='unsafe').load(text)\n"),
    (328, "import hashlib\ndef etag(fh):\n    return hashlib.file_digest(fh, 'sha1').hexdigest()\n"),
    (338, "import numpy as np\ndef new_api_key():\n    rng = np.random.default_rng()\n    api_key = rng.bytes(24).hex()\n    return api_key\n"),
    (338, "import random, string\ndef make_password():\n    chars = list(string.ascii_letters)\n    random.shuffle(chars)\n    return ''.join(chars[:12])\n"),
    (798, "import pika\ncreds = pika.PlainCredentials('worker', 'Rq7!mZ2x-prod')\n"),
    (611, "from lxml import etree\ndef feed():\n    return etree.XMLPullParser(events=('end',), resolve_entities=True)\n"),
    (918, "import feedparser\ndef fetch(feed_url):\n    return feedparser.parse(feed_url)\n"),
    (918, "from weasyprint import HTML\ndef pdf(request):\n    return HTML(url=request.GET['page_url']).write_pdf()\n"),
    (79, "from django.utils.html import format_html\ndef badge(user):\n    return format_html('<b>' + user.display_name + '</b>')\n"),
    (79, "def render(env, comments):\n    return env.from_string('<li>{{ c.body|safe }}</li>').render(comments=comments)\n"),
    (22, "import os\ndef report(request, name):\n    return open(f'/srv/media/reports/{name}', 'rb')\n"),
    # fourth batch (after l/m's one evaluation; the same gaps in other words)
    (78, "import anyio\nasync def conv(path, fmt):\n    await anyio.run_process(f'pandoc {path} -t {fmt}')\n"),
    (78, "import asyncio\nasync def ping(host):\n    p = await asyncio.create_subprocess_shell('ping -c1 ' + host)\n    return await p.wait()\n"),
    (502, "from multiprocessing.connection import Client\ndef pull(addr):\n    with Client(addr) as c:\n        return c.recv()\n"),
    (328, "import zlib\ndef sign(secret, msg):\n    return zlib.crc32((secret + msg).encode())\n"),
    (328, "import binascii\ndef link(path, key):\n    sig = binascii.crc32(path.encode() + key)\n    return f'{path}?s={sig}'\n"),
    (327, "from pymongo import MongoClient\nclient = MongoClient('mongodb://db', tls=True, tlsInsecure=True)\n"),
    (327, "import redis\nr = redis.Redis(host='cache', ssl=True, ssl_cert_reqs='none')\n"),
    (79, "import streamlit as st\nname = st.query_params.get('name', '')\nst.markdown(f'<b>{name}</b>', unsafe_allow_html=True)\n"),
    (918, "import fsspec\nfrom flask import request\ndef imp():\n    with fsspec.open(request.args['src']) as fh:\n        return fh.read()\n"),
    (918, "import pycurl\ndef get(url):\n    c = pycurl.Curl()\n    c.setopt(c.URL, url)\n    c.perform()\n"),
    (79, "from django.utils.safestring import mark_safe\ndef badge(label):\n    return mark_safe('<span>' + label + '</span>')\n"),
    # fifth batch (after n/o's and p/q's one evaluation; the same gaps in other words)
    (78, "def grep(container, pattern):\n    return container.exec_run(['sh', '-c', f'grep -c {pattern} /var/log/app.log'])\n"),
    (94, "from chameleon import PageTemplate\nfrom flask import request\ndef preview():\n    return PageTemplate(request.form['tpl'])(name='x')\n"),
    (502, "from celery import Celery\napp = Celery('w')\napp.conf.update(task_serializer='pickle', accept_content=['pickle', 'json'])\n"),
    (502, "CELERY_ACCEPT_CONTENT = ['json', 'pickle']\n"),
    (798, "from azure.storage.blob import BlobServiceClient\nsvc = BlobServiceClient.from_connection_string('DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==;EndpointSuffix=core.windows.net')\n"),
    (22, "import json, shutil\nfrom pathlib import Path\nOUT = Path('/srv/pub')\nasync def publish(message):\n    data = json.loads(message.body)\n    shutil.copyfile('/srv/stage/a.html', OUT / data['target'])\n"),
    (79, "from fasthtml.common import Div, NotStr, fast_app\napp, rt = fast_app()\n@rt('/hello')\ndef hello(name: str):\n    return Div(NotStr(f'<b>{name}</b>'))\n"),
    (79, "from dash import dcc\ndef feed(notes):\n    return [dcc.Markdown(n, dangerously_allow_html=True) for n in notes]\n"),
    (611, "from zeep import Client, Settings\nclient = Client('https://ws.example/svc?wsdl', settings=Settings(forbid_entities=False, forbid_external=False))\n"),
    (918, "from flask import request\nfrom langchain_community.document_loaders import WebBaseLoader\ndef ask():\n    return WebBaseLoader(request.get_json()['url']).load()\n"),
    (918, "async def preview(page, job):\n    await page.goto(job['page_url'])\n    return await page.pdf()\n"),
    (918, "import smtplib\nfrom flask import request\ndef test_mail():\n    with smtplib.SMTP(request.form['smtp_host'], 587) as s:\n        return s.noop()\n"),
    (327, "import ssl\nfrom ldap3 import Server, Tls\nserver = Server('ldaps://dc.corp', use_ssl=True, tls=Tls(validate=ssl.CERT_NONE))\n"),
    (918, "from flask import request\nfrom langchain_community.document_loaders import WebBaseLoader\ndef ask():\n    link = request.get_json()['url']\n    return WebBaseLoader(link).load()\n"),
    (78, "import pexpect\ndef dump(job):\n    return pexpect.spawn(f\"/bin/bash -c 'pg_dump {job['db']} | gzip > /tmp/x.gz'\")\n"),
    (328, "from passlib import hash as ph\ndef store(pw):\n    return ph.ldap_salted_sha1.hash(pw)\n"),
    (22, "from PIL import Image\nfrom flask import request\ndef thumb():\n    with Image.open('/srv/media/' + request.args['src']) as img:\n        return img.size\n"),
    (611, "import xml.etree.ElementTree as ET\nasync def imp(request):\n    p = ET.XMLPullParser(events=('end',))\n    async for chunk in request.stream():\n        p.feed(chunk)\n"),
    (79, "from flask import request, Response\ndef cells():\n    skus = request.args.getlist('sku')\n    return Response(''.join(f'<td>{s}</td>' for s in skus), mimetype='text/html')\n"),
    # sixth batch (after r/s's and t/u's one evaluation; the same gaps in other words)
    (798, "from twilio.rest import Client\nsms = Client('AC3f9b2e7d1c6a4058b9e2f7d3c1a6b4e9', 'a8e4c1f7a2b8d6e3f0a5c7b9d1e2f4a6')\n"),
    (798, "import os\nos.environ.setdefault('API_TOKEN', 'Zx81kQ2mPq7rTt5vWw3yYy9a')\n"),
    (798, "from pydantic import SecretStr\nclass Settings:\n    db_password: SecretStr = SecretStr('Kp9#xR2v-Lm4q')\n"),
    (338, "from faker import Faker\nfake = Faker()\ndef reset_password():\n    return fake.password(length=12)\n"),
    (338, "from bson import ObjectId\ndef make_reset_token():\n    return str(ObjectId())\n"),
    (328, "import rsa\ndef sign(msg, key):\n    return rsa.sign(msg, key, 'SHA-1')\n"),
    (328, "import xxhash\ndef webhook_sig(secret, body):\n    return xxhash.xxh64_hexdigest(secret + body)\n"),
    (327, "from confluent_kafka import Producer\np = Producer({'bootstrap.servers': 'k:9093', 'security.protocol': 'SSL', 'enable.ssl.certificate.verification': False})\n"),
    (94, "import sympy\nfrom flask import request\ndef calc():\n    return str(sympy.sympify(request.args['expr']))\n"),
    (22, "from channels.generic.websocket import JsonWebsocketConsumer\nclass Up(JsonWebsocketConsumer):\n    def receive_json(self, content):\n        open('/srv/up/' + content['name'], 'wb').write(b'')\n"),
    (22, "def save(msg):\n    for part in msg.walk():\n        name = part.get_filename()\n        if name:\n            open('/srv/mail/' + name, 'wb').write(part.get_payload(decode=True))\n"),
    (79, "import cherrypy\nclass App:\n    @cherrypy.expose\n    def hello(self, name=''):\n        return f'<h1>Hello {name}</h1>'\n"),
    (79, "from nicegui import ui\ndef show(msg):\n    ui.html(f'<p>{msg}</p>', sanitize=False)\n"),
    (918, "import boto3\nfrom flask import request\ndef head():\n    s3 = boto3.client('s3', endpoint_url=request.json['endpoint'])\n    return s3.list_buckets()\n"),
    (918, "import urllib.request\ndef icon(url):\n    opener = urllib.request.build_opener()\n    return opener.open(url).read()\n"),
    (918, "from git import Repo\nfrom flask import request\ndef clone():\n    repo_url = request.form['repo_url']\n    Repo.clone_from(repo_url, '/srv/clones/x')\n"),
    (78, "import subprocess\ndef deploy(host, branch):\n    subprocess.run(['ssh', host, f'cd /srv && git checkout {branch}'])\n"),
    (78, "from airflow.operators.bash import BashOperator\ndef make(region):\n    return BashOperator(task_id='x', bash_command=f'export.sh --region {region}')\n"),
    (377, "import tempfile\ndef chart():\n    path = tempfile.NamedTemporaryFile(suffix='.png').name\n    open(path, 'wb').write(b'')\n"),
    # seventh batch (after w/x's one evaluation): the same idioms in other words
    (78, "import os\ndef thumb(job):\n    os.posix_spawn('/bin/sh', ['/bin/sh', '-c', 'convert ' + job['src'] + ' t.png'], {})\n"),
    (78, "from plumbum import local\ndef tags(ref):\n    return local['sh']['-c', 'git tag --contains ' + ref]()\n"),
    (78, "from airflow.decorators import task\n@task.bash\ndef sync(bucket=None):\n    return f'aws s3 sync s3://{bucket} /data'\n"),
    (94, "import pandas as pd\nfrom flask import request\nDF = pd.read_csv('sales.csv')\ndef filt():\n    return DF.query(request.args['q']).to_json()\n"),
    (94, "import pandas as pd\nfrom flask import request\ndef calc():\n    return str(pd.eval(request.form['expr']))\n"),
    (502, "import skops.io as sio\ndef restore(blob):\n    return sio.loads(blob, trusted=True)\n"),
    (502, "from sqlitedict import SqliteDict\ndef settings(path):\n    with SqliteDict(path) as db:\n        return dict(db)\n"),
    (328, "from passlib.apache import HtdigestFile\ndef add(user, pw):\n    f = HtdigestFile('/etc/app.htdigest', default_scheme='plaintext')\n    f.set_password(user, 'app', pw)\n"),
    (327, "import redis\ndef cache(url):\n    return redis.Redis.from_url(url, ssl_cert_reqs=None)\n"),
    (338, "import time\ndef issue_reset_token(user):\n    return f'{user.id}-{time.time_ns():x}'\n"),
    (338, "import os, time\nfrom strawberry import mutation\n@mutation(name='newInviteCode')\ndef invite(info):\n    code = str(os.getpid()) + str(time.time())\n    return code\n"),
    (798, "import requests\nSENDGRID_CREDENTIALS = ('apikey', 'SG.q8Wd2kL0pZrT4vX9mN3bY7cE1aF6hJ5s')\ndef send(m):\n    return requests.post('https://api.sendgrid.com/v3/mail/send', auth=SENDGRID_CREDENTIALS, json=m)\n"),
    (22, "import sqlite3\nfrom flask import request\ndef db():\n    return sqlite3.connect('/var/db/' + request.args['tenant'] + '.db')\n"),
    (22, "import socketio\nsio = socketio.Server()\n@sio.on('save')\ndef save(sid, data):\n    open('/srv/notes/' + data['name'], 'w').write(data['text'])\n"),
    (22, "import pandas as pd\nfrom flask import request\ndef export(frame):\n    frame.to_csv('/srv/exports/' + request.args['file'])\n"),
    (79, "from sanic.response import html\nasync def hello(request):\n    return html('<p>Hi ' + request.args.get('who', '') + '</p>')\n"),
    (79, "from jinja2 import Environment, PackageLoader, select_autoescape\nenv = Environment(loader=PackageLoader('app'), autoescape=select_autoescape(['txt']))\n"),
    (79, "from dominate.util import raw\nfrom dominate.tags import div\ndef card(comment):\n    return div(raw(comment.body)).render()\n"),
    (611, "import xmlrpc.client\nfrom flask import request\ndef rpc():\n    params, method = xmlrpc.client.loads(request.data)\n    return method\n"),
    (918, "import websockets\nasync def bridge(cfg):\n    async with websockets.connect(cfg['feed_url']) as ws:\n        return await ws.recv()\n"),
    (918, "import trafilatura\nfrom celery import shared_task\n@shared_task\ndef read_later(link):\n    return trafilatura.fetch_url(link)\n"),
    # eighth batch (after y/z's one evaluation): the same idioms in other words
    (78, "import sh\ndef lint(path):\n    return sh.sh('-c', 'flake8 ' + path)\n"),
    (89, "from psycopg2 import sql\nfrom flask import request\ndef q(cur):\n    cur.execute(sql.SQL('SELECT * FROM t ORDER BY ' + request.args['o']))\n"),
    (89, "from psycopg import sql\ndef q(cur, col):\n    cur.execute(sql.SQL('SELECT {} FROM t').format(sql.SQL(col)))\n"),
    (22, "from sanic.response import file_stream\nasync def get(request):\n    return await file_stream('/srv/media/' + request.args.get('f'))\n"),
    (327, "import httpx\nclass Api:\n    VERIFY = False\n    def get(self, path):\n        return httpx.get('https://api.example' + path, verify=self.VERIFY)\n"),
    (327, "from tornado.httpclient import HTTPRequest\ndef req(url):\n    return HTTPRequest(url, validate_cert=False)\n"),
    (338, "import uuid\ndef password_reset_token(email):\n    return uuid.uuid3(uuid.NAMESPACE_DNS, email).hex\n"),
    (611, "from lxml import etree\nOPTS = {'resolve_entities': True, 'load_dtd': True}\ndef read(data):\n    return etree.fromstring(data, etree.XMLParser(**OPTS))\n"),
    (79, "from bottle import template\nROW = '<tr><td>{{!name}}</td></tr>'\ndef row(name):\n    return template(ROW, name=name)\n"),
    (79, "import pystache\nPAGE = '<p>{{{bio}}}</p>'\ndef page(bio):\n    return pystache.render(PAGE, {'bio': bio})\n"),
    (918, "from jwt import PyJWKClient\nimport jwt\ndef key_for(token):\n    jku = jwt.get_unverified_header(token)['jku']\n    return PyJWKClient(jku).get_signing_key_from_jwt(token)\n"),
    # ninth batch (after aa/ab's one evaluation): the same idioms in other words
    (78, "from kubernetes.stream import stream\ndef run(api, pod, ns, arg):\n    return stream(api.connect_get_namespaced_pod_exec, pod, ns, command=['sh', '-c', 'ls ' + arg])\n"),
    (78, "from crontab import CronTab\ndef schedule(user, target):\n    cron = CronTab(user=user)\n    cron.new(command='rsync -a /data ' + target)\n    cron.write()\n"),
    (328, "from sqlalchemy_utils import PasswordType\nfrom sqlalchemy import Column\npassword = Column(PasswordType(schemes=['md5_crypt']))\n"),
    (328, "def sign(key, data):\n    return key.sign(data, algorithm='rsa-sha1')\n"),
    (502, "import pickle\nfrom kafka import KafkaConsumer\ndef consume(topic):\n    return KafkaConsumer(topic, value_deserializer=pickle.loads)\n"),
    (502, "from gensim.models import Word2Vec\ndef load(path):\n    return Word2Vec.load(path)\n"),
    (327, "import ldap\ndef connect(uri):\n    ldap.set_option(ldap.OPT_X_TLS_REQUIRE_CERT, ldap.OPT_X_TLS_ALLOW)\n    return ldap.initialize(uri)\n"),
    (327, "import pyminizip\ndef pack(src, dst, secret):\n    pyminizip.compress(src, None, dst, secret, 5)\n"),
    (22, "import zipfile, os\nfrom flask import request\ndef bundle():\n    with zipfile.ZipFile('/tmp/out.zip', 'w') as z:\n        for name in request.json['files']:\n            z.write(os.path.join('/srv/docs', name))\n"),
    (79, "import string\nfrom flask import request\nPAGE = string.Template('<p>Hello $who</p>')\ndef hi():\n    return PAGE.substitute(who=request.args['who'])\n"),
    (79, "from http.server import BaseHTTPRequestHandler\nclass H(BaseHTTPRequestHandler):\n    def do_GET(self):\n        self.wfile.write(f'<p>{self.path}</p>'.encode())\n"),
]

FIXED = [
    "from flask import request, send_file\nfrom werkzeug.utils import secure_filename\nimport os\ndef dl():\n    return send_file(os.path.join('/srv/files', secure_filename(request.args['name'])))\n",
    "from pathlib import Path\nfrom fastapi import FastAPI, HTTPException\napp = FastAPI()\nBASE = Path('/data')\n@app.get('/r/{name}')\ndef r(name: str):\n    p = (BASE / name).resolve()\n    if not p.is_relative_to(BASE):\n        raise HTTPException(404)\n    return p.read_text()\n",
    "import os\nfrom flask import request, abort\nBASE = '/srv/files'\ndef dl():\n    p = os.path.realpath(os.path.join(BASE, request.args['name']))\n    if os.path.commonpath([BASE, p]) == BASE:\n        return open(p).read()\n    abort(404)\n",
    "import subprocess\ndef ping(host):\n    return subprocess.run(['ping', '-c', '1', host], capture_output=True)\n",
    "import os, shlex\ndef convert(path):\n    os.system('convert ' + shlex.quote(path) + ' out.png')\n",
    "import subprocess, shlex\ndef run(args):\n    subprocess.run('tool ' + shlex.join(args), shell=True)\n",
    "from flask import request\nfrom markupsafe import escape\ndef hello():\n    name = request.args.get('name', '')\n    return f'<h1>Hello {escape(name)}</h1>'\n",
    "from django.http import HttpResponse\nfrom django.utils.html import escape\ndef view(request):\n    q = request.GET.get('q', '')\n    return HttpResponse('You searched for ' + escape(q))\n",
    "from django.http import HttpResponse\ndef view(request):\n    q = request.GET.get('q', '')\n    return HttpResponse('You searched for ' + q, content_type='text/plain')\n",
    "def find(cur, user):\n    cur.execute('SELECT * FROM users WHERE name = ?', (user,))\n    return cur.fetchall()\n",
    "from psycopg2 import sql\ndef q(cur, table):\n    cur.execute(sql.SQL('SELECT * FROM {}').format(sql.Identifier(table)))\n",
    "def find(cur, ids):\n    marks = ','.join('?' * len(ids))\n    cur.execute('SELECT * FROM t WHERE id IN (%s)' % marks, ids)\n",
    "import ast\nfrom flask import request\ndef calc():\n    return str(ast.literal_eval(request.args['expr']))\n",
    "from Crypto.Cipher import AES\ndef enc(key, data):\n    return AES.new(key, AES.MODE_GCM).encrypt_and_digest(data)\n",
    "import requests\ndef fetch(url):\n    return requests.get('https://api.example.com/v1', timeout=5).text\n",
    "import ssl\ndef ctx():\n    c = ssl.create_default_context()\n    c.minimum_version = ssl.TLSVersion.TLSv1_2\n    return c\n",
    "import hashlib, os\ndef store(password):\n    salt = os.urandom(16)\n    return salt + hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)\n",
    "import hashlib\ndef store(password, salt):\n    return hashlib.pbkdf2_hmac('sha256', password.encode(), salt, 600_000)\n",
    "import hashlib\ndef checksum(data: bytes) -> str:\n    return hashlib.sha256(data).hexdigest()\n",
    "import secrets\ndef make_token(n=32):\n    return secrets.token_urlsafe(n)\n",
    "import numpy as np\ndef noise(n):\n    return np.random.default_rng(0).normal(size=n)\n",
    "import tempfile\ndef scratch():\n    fd, name = tempfile.mkstemp(suffix='.csv')\n    return fd, name\n",
    "import json\ndef load(blob):\n    return json.loads(blob)\n",
    "import yaml\ndef cfg(text):\n    return yaml.safe_load(text)\n",
    "import torch\ndef restore(path):\n    return torch.load(path, weights_only=True)\n",
    "import defusedxml.ElementTree as ET\ndef parse(body):\n    return ET.fromstring(body)\n",
    "from lxml import etree\ndef parse(data):\n    parser = etree.XMLParser(resolve_entities=False, no_network=True)\n    return etree.fromstring(data, parser)\n",
    "import os, requests\ndef call():\n    return requests.get('https://api.example.com', headers={'Authorization': 'Bearer ' + os.environ['API_TOKEN']})\n",
    "import os\ndef db():\n    return os.environ['DB_PASSWORD']\n",
    "import os\nfrom flask import Flask\napp = Flask(__name__)\napp.config['SECRET_KEY'] = os.environ['SECRET_KEY']\n",
    "from transformers import AutoTokenizer\ndef tok(pad_token='<pad>', tokenizer_name='gpt2'):\n    return AutoTokenizer.from_pretrained(tokenizer_name)\n",
    "import requests\nfrom urllib.parse import urlparse\nfrom flask import request, abort\nALLOWED = {'img.example.com'}\ndef proxy():\n    url = request.args['url']\n    if urlparse(url).hostname not in ALLOWED:\n        abort(403)\n    return requests.get(url, timeout=5).content\n",
    "import requests\nfrom urllib.parse import urlparse\nALLOWED = {'img.example.com'}\ndef preview(url):\n    host = urlparse(url).hostname\n    if host in ALLOWED:\n        return requests.get(url, timeout=5).text\n    return None\n",
    # second batch
    "import requests\nclass Api:\n    def __init__(self):\n        self.http = requests.Session()\n        self.http.verify = True\n",
    "import os\nfrom Crypto.Cipher import AES\ndef enc(key, data):\n    return AES.new(key, AES.MODE_GCM, nonce=os.urandom(12)).encrypt_and_digest(data)\n",
    "from werkzeug.security import generate_password_hash\ndef store(pw):\n    return generate_password_hash(pw, method='scrypt')\n",
    "from passlib.context import CryptContext\nctx = CryptContext(schemes=['argon2', 'bcrypt'])\n",
    "import xmltodict\ndef parse(body):\n    return xmltodict.parse(body)\n",
    "from jinja2.sandbox import SandboxedEnvironment\nfrom flask import request\ndef tpl():\n    return SandboxedEnvironment(autoescape=True).from_string(request.form['t']).render()\n",
    "from lxml import objectify\ndef parse(stream):\n    parser = objectify.makeparser(resolve_entities=False, no_network=True)\n    return objectify.parse(stream, parser).getroot()\n",
    "import paramiko, shlex\ndef du(ssh: paramiko.SSHClient, d: str):\n    return ssh.exec_command('du -sh -- ' + shlex.quote(d))\n",
    "from pathlib import Path\nfrom fastapi import APIRouter, HTTPException\nr = APIRouter()\nLOGS = Path('/var/log/app')\n@r.get('/logs')\ndef tail(service: str):\n    p = LOGS.joinpath(service + '.log').resolve()\n    if p.parent != LOGS.resolve() or not p.exists():\n        raise HTTPException(404)\n    return p.read_text()\n",
    # third batch
    "import aiohttp\nclass Client:\n    def __init__(self, base_url):\n        self.base_url = base_url\n    async def stock(self, sku):\n        async with aiohttp.ClientSession() as s:\n            return await s.get(f'{self.base_url}/stock/{sku}')\n",
    "import requests\ndef item(item_id):\n    return requests.get('https://api.example.com/items/' + str(item_id), timeout=5).json()\n",
    "def find(con, ids):\n    in_list = ', '.join('?' for _ in ids)\n    return con.execute(f'SELECT * FROM t WHERE id IN ({in_list})', ids).fetchall()\n",
    "import random\ndef make_password():\n    rng = random.SystemRandom()\n    return ''.join(rng.choice('abcdefgh') for _ in range(12))\n",
    "from markupsafe import Markup\ndef link(user):\n    return Markup('<a href=\"/u/{0}\">{1}</a>').format(user.username, user.display_name)\n",
    "import os, pika\ncreds = pika.PlainCredentials('worker', os.environ['RABBITMQ_PASSWORD'])\n",
    # fourth batch
    "import random, string\ndef token():\n    return ''.join(random.SystemRandom().choices(string.ascii_letters, k=32))\n",
    "from RestrictedPython import compile_restricted, safe_globals\ndef run(src):\n    exec(compile_restricted(src, '<s>', 'exec'), dict(safe_globals))\n",
    "from pathlib import Path\nfrom flask import request, abort, send_file\nROOT = Path('/srv/d')\ndef dl():\n    p = (ROOT / request.args['f']).resolve()\n    try:\n        p.relative_to(ROOT)\n    except ValueError:\n        abort(404)\n    return send_file(p)\n",
    "import shutil, uuid\nfrom flask import request\ndef rm():\n    wid = uuid.UUID(request.args['id'])\n    shutil.rmtree(f'/srv/ws/{wid}')\n",
    "import bleach\nfrom django.utils.safestring import mark_safe\ndef bio(user):\n    return mark_safe(bleach.clean(user.bio))\n",
    "from lxml import etree\netree.set_default_parser(etree.XMLParser(resolve_entities=False, no_network=True))\ndef parse(body):\n    return etree.fromstring(body)\n",
    "import anyio\nasync def conv(path, fmt):\n    await anyio.run_process(['pandoc', path, '-t', fmt])\n",
    "import json\nfrom multiprocessing.connection import Client\ndef pull(addr):\n    with Client(addr) as c:\n        return json.loads(c.recv_bytes())\n",
    "import zlib\ndef checksum(data):\n    return zlib.crc32(data) & 0xffffffff\n",
    "import certifi\nfrom pymongo import MongoClient\nclient = MongoClient('mongodb://db', tls=True, tlsCAFile=certifi.where())\n",
    "import html\nimport streamlit as st\nname = st.query_params.get('name', '')\nst.markdown(f'<b>{html.escape(name)}</b>', unsafe_allow_html=True)\n",
    "import fsspec\nfrom flask import request, abort\ndef imp():\n    src = request.args['src']\n    if not src.startswith('s3://our-bucket/'):\n        abort(400)\n    with fsspec.open(src) as fh:\n        return fh.read()\n",
    "import pycurl\nfrom urllib.parse import urlsplit\nHOSTS = {'a.example.com'}\ndef get(url):\n    if urlsplit(url).hostname not in HOSTS:\n        raise ValueError(url)\n    c = pycurl.Curl()\n    c.setopt(c.URL, url)\n    c.perform()\n",
    "from django.utils.html import escape\nfrom django.utils.safestring import mark_safe\ndef badge(label):\n    return mark_safe('<span>' + escape(label) + '</span>')\n",
    # fifth batch
    "import shlex\ndef grep(container, pattern):\n    return container.exec_run(['grep', '-c', '--', pattern, '/var/log/app.log'])\n",
    "from chameleon import PageTemplate\nfrom flask import request\nTPL = PageTemplate('<p>${name}</p>')\ndef preview():\n    return TPL(name=request.form['name'])\n",
    "from celery import Celery\napp = Celery('w')\napp.conf.update(task_serializer='json', accept_content=['json'])\n",
    "import os\nfrom azure.storage.blob import BlobServiceClient\nsvc = BlobServiceClient.from_connection_string(os.environ['AZURE_STORAGE_CONNECTION_STRING'])\n",
    "import json, shutil\nfrom pathlib import Path\nOUT = Path('/srv/pub')\nasync def publish(message):\n    data = json.loads(message.body)\n    shutil.copyfile('/srv/stage/a.html', OUT / f\"{int(data['page'])}.html\")\n",
    "from fasthtml.common import B, Div, fast_app\napp, rt = fast_app()\n@rt('/hello')\ndef hello(name: str):\n    return Div(B(name))\n",
    "from dash import dcc\ndef feed(notes):\n    return [dcc.Markdown(n) for n in notes]\n",
    "from zeep import Client, Settings\nclient = Client('https://ws.example/svc?wsdl', settings=Settings(strict=False))\n",
    "import aiosqlite\nALLOWED = ('title', 'status')\nasync def edit(db, changes_in: dict, card_id: int):\n    changes = {c: v for c, v in changes_in.items() if c in ALLOWED}\n    sets = ', '.join(f'{c} = ?' for c in changes)\n    await db.execute(f'UPDATE cards SET {sets} WHERE id = ?', (*changes.values(), card_id))\n",
    "from lxml import etree\nfrom flask import request\ndef imp():\n    return [n.tag for _e, n in etree.iterparse(request.files['f'], resolve_entities=False, no_network=True)]\n",
    "import ssl\nfrom ldap3 import Server, Tls\nserver = Server('ldaps://dc.corp', use_ssl=True, tls=Tls(validate=ssl.CERT_REQUIRED))\n",
    "from mako.template import Template\nfrom flask import request\ndef search():\n    return Template('<b>${q}</b>', default_filters=['h']).render(q=request.args['q'])\n",
    "import requests\nfrom urllib.parse import urlsplit\ndef allowed(url):\n    return urlsplit(url).hostname in {'a.example.com'}\ndef fetch(request):\n    url = request.args['url']\n    if not allowed(url):\n        raise ValueError(url)\n    return requests.get(url, timeout=5).text\n",
    "from passlib import hash as ph\ndef store(pw):\n    return ph.argon2.hash(pw)\n",
    "from flask import request, Response\nfrom markupsafe import escape\ndef cells():\n    skus = request.args.getlist('sku')\n    return Response(''.join(f'<td>{escape(s)}</td>' for s in skus), mimetype='text/html')\n",
    # sixth batch
    "import os\nfrom pydantic import SecretStr\nclass Settings:\n    db_password: SecretStr = SecretStr(os.environ['DB_PASSWORD'])\n",
    "import secrets\ndef reset_password():\n    return secrets.token_urlsafe(12)\n",
    "import rsa\ndef sign(msg, key):\n    return rsa.sign(msg, key, 'SHA-256')\n",
    "import xxhash\ndef shard(user_name):\n    return xxhash.xxh64_intdigest(user_name) % 64\n",
    "from confluent_kafka import Producer\np = Producer({'bootstrap.servers': 'k:9093', 'security.protocol': 'SSL', 'ssl.ca.location': '/etc/ca.pem'})\n",
    "import os\nimport boto3\ns3 = boto3.client('s3', endpoint_url=os.environ['S3_ENDPOINT'])\n",
    "import shlex, subprocess\ndef deploy(host, branch):\n    subprocess.run(['ssh', host, 'cd /srv && git checkout ' + shlex.quote(branch)])\n",
    "import tempfile\ndef chart():\n    with tempfile.NamedTemporaryFile(suffix='.png', delete=False) as fh:\n        fh.write(b'')\n        return fh.name\n",
    "import html\nfrom nicegui import ui\ndef show(msg):\n    ui.html(f'<p>{html.escape(msg)}</p>', sanitize=False)\n",
    # seventh batch (after w/x's one evaluation)
    "import os\ndef thumb(job):\n    os.posix_spawn('/usr/bin/convert', ['/usr/bin/convert', job['src'], 't.png'], {})\n",
    "from plumbum import local\ndef tags(ref):\n    return local['git']['tag', '--contains', ref]()\n",
    "import shlex\nfrom airflow.decorators import task\n@task.bash\ndef sync(bucket=None):\n    return f'aws s3 sync s3://{shlex.quote(bucket)} /data'\n",
    "import pandas as pd\nfrom flask import request\nDF = pd.read_csv('sales.csv')\ndef filt():\n    col = request.args['col']\n    if col not in DF.columns:\n        return '{}'\n    return DF[DF[col] > 0].to_json()\n",
    "import skops.io as sio\nALLOWED = ['sklearn.linear_model._logistic.LogisticRegression']\ndef restore(blob):\n    unknown = set(sio.get_untrusted_types(data=blob)) - set(ALLOWED)\n    if unknown:\n        raise ValueError(unknown)\n    return sio.loads(blob, trusted=ALLOWED)\n",
    "import json\nfrom sqlitedict import SqliteDict\ndef settings(path):\n    with SqliteDict(path, encode=json.dumps, decode=json.loads) as db:\n        return dict(db)\n",
    "from passlib.apache import HtpasswdFile\ndef add(user, pw):\n    f = HtpasswdFile('/etc/app.htpasswd', default_scheme='bcrypt')\n    f.set_password(user, pw)\n",
    "import redis\ndef cache(url):\n    return redis.Redis.from_url(url, ssl_cert_reqs='required')\n",
    "import secrets\ndef issue_reset_token(user):\n    return f'{user.id}-{secrets.token_hex(16)}'\n",
    "import time\nfrom strawberry import mutation\n@mutation(name='newInviteCode')\ndef invite(info):\n    started = time.time()\n    return round(time.time() - started, 3)\n",
    "import os\nimport requests\nSENDGRID_CREDENTIALS = ('apikey', os.environ['SENDGRID_KEY'])\ndef send(m):\n    return requests.post('https://api.sendgrid.com/v3/mail/send', auth=SENDGRID_CREDENTIALS, json=m)\n",
    "import re, sqlite3\nfrom flask import request\ndef db():\n    t = request.args['tenant']\n    if not re.fullmatch(r'[a-z0-9]{1,32}', t):\n        return None\n    return sqlite3.connect('/var/db/' + t + '.db')\n",
    "import os, socketio\nsio = socketio.Server()\n@sio.on('save')\ndef save(sid, data):\n    open('/srv/notes/' + os.path.basename(data['name']), 'w').write(data['text'])\n",
    "from fastapi import Depends, FastAPI\nfrom .auth import me\napp = FastAPI()\n@app.get('/files/{n}')\ndef files(n: int, user=Depends(me)):\n    return open(f'/srv/{user.home}/{n:d}.txt').read()\n",
    "from markupsafe import escape\nfrom sanic.response import html\nasync def hello(request):\n    return html('<p>Hi ' + escape(request.args.get('who', '')) + '</p>')\n",
    "from jinja2 import Environment, PackageLoader, select_autoescape\nenv = Environment(loader=PackageLoader('app'), autoescape=select_autoescape(['html', 'xml']))\n",
    "import json\nfrom flask import request\ndef shell():\n    state = json.dumps(request.args.to_dict()).replace('<', '\\\\u003c')\n    return f'<script>window.S = {state};</script>'\n",
    "import xmlrpc.client\nfrom defusedxml.xmlrpc import monkey_patch\nfrom flask import request\nmonkey_patch()\ndef rpc():\n    params, method = xmlrpc.client.loads(request.data)\n    return method\n",
    "from lxml import etree\ndef parse(path):\n    parser = etree.XMLParser(load_dtd=True, resolve_entities=False, no_network=True)\n    return etree.parse(path, parser)\n",
    "from RestrictedPython import compile_restricted, safe_globals\ndef run_rule(src, env):\n    code = compile_restricted(src, '<rule>', 'exec')\n    exec(code, dict(safe_globals, **env))\n",
    "import redis.asyncio as aioredis\nimport os\nPOOL = aioredis.from_url(os.environ['REDIS_URL'])\n",
    # eighth batch (after y/z's one evaluation)
    "import sh\ndef lint(path):\n    return sh.flake8(path)\n",
    "from psycopg2 import sql\nfrom flask import request\ndef q(cur):\n    order = 'DESC' if request.args.get('d') == 'desc' else 'ASC'\n    cur.execute(sql.SQL('SELECT * FROM t ORDER BY {} ' + order).format(sql.Identifier(request.args['o'])))\n",
    "import zipfile, json\nfrom flask import request\ndef manifest():\n    with zipfile.ZipFile(request.files['pkg']) as z:\n        with z.open('manifest.json') as fh:\n            return json.load(fh)\n",
    "import os\nfrom sanic.response import file_stream\nasync def get(request):\n    return await file_stream('/srv/media/' + os.path.basename(request.args.get('f')))\n",
    "import httpx\nclass Api:\n    VERIFY = True\n    def get(self, path):\n        return httpx.get('https://api.example' + path, verify=self.VERIFY)\n",
    "import uuid\ndef stable_id(email):\n    return uuid.uuid5(uuid.NAMESPACE_DNS, email).hex\n",
    "from lxml import etree\nclass Reader:\n    OPTS = {'resolve_entities': False, 'no_network': True}\n    def __init__(self):\n        self.parser = etree.XMLParser(**self.OPTS)\n    def read(self, data):\n        return etree.fromstring(data, self.parser)\n",
    "from bottle import template\nROW = '<tr><td>{{name}}</td></tr>'\ndef row(name):\n    return template(ROW, name=name)\n",
    "from jwt import PyJWKClient\nJWKS = 'https://login.example/.well-known/jwks.json'\ndef key_for(token):\n    return PyJWKClient(JWKS).get_signing_key_from_jwt(token)\n",
    # ninth batch (after aa/ab's one evaluation)
    "from kubernetes.stream import stream\ndef run(api, pod, ns, arg):\n    return stream(api.connect_get_namespaced_pod_exec, pod, ns, command=['ls', '--', arg])\n",
    "import shlex\nfrom crontab import CronTab\ndef schedule(user, target):\n    cron = CronTab(user=user)\n    cron.new(command='rsync -a /data ' + shlex.quote(target))\n    cron.write()\n",
    "from sqlalchemy_utils import PasswordType\nfrom sqlalchemy import Column\npassword = Column(PasswordType(schemes=['argon2', 'pbkdf2_sha512']))\n",
    "import json\nfrom kafka import KafkaConsumer\ndef consume(topic):\n    return KafkaConsumer(topic, value_deserializer=json.loads)\n",
    "from gensim.models import KeyedVectors\ndef load(path):\n    return KeyedVectors.load_word2vec_format(path, binary=True)\n",
    "import ldap\ndef connect(uri):\n    ldap.set_option(ldap.OPT_X_TLS_REQUIRE_CERT, ldap.OPT_X_TLS_DEMAND)\n    return ldap.initialize(uri)\n",
    "import string, html\nfrom flask import request\nPAGE = string.Template('<p>Hello $who</p>')\ndef hi():\n    return PAGE.substitute(who=html.escape(request.args['who']))\n",
    "import mistune\nfrom markupsafe import Markup\nrender_md = mistune.create_markdown(escape=True)\ndef md(text):\n    return Markup(render_md(text))\n",
    "import zipfile\nfrom flask import request\ndef manifest():\n    with zipfile.ZipFile(request.files['pkg']) as z:\n        return z.read('manifest.json')\n",
]


@pytest.mark.parametrize("cwe,code", VULNERABLE, ids=[f"cwe{c}-{i}" for i, (c, _) in enumerate(VULNERABLE)])
def test_vulnerable_idiom_is_flagged_with_its_family(cwe, code):
    fams = {f.cwe for f in label_findings(code)}
    # TLS verification findings report CWE-295, which the issue files under 327
    assert cwe in fams or (cwe == 327 and 295 in fams), (fams, code)


@pytest.mark.parametrize("code", FIXED, ids=[f"fixed-{i}" for i in range(len(FIXED))])
def test_fixed_idiom_is_clean(code):
    assert label_findings(code) == [], code


def test_rule_and_taint_findings_say_where_they_come_from():
    code = "import hashlib, os\ndef f(password):\n    os.system('ls ' + password)\n    return hashlib.pbkdf2_hmac('sha1', password.encode(), b's', 10)\n"
    assert {f.source for f in rule_findings(code)} == {"rule"}
    assert {f.source for f in taint_findings(code)} == {"taint"}
    assert {(f.line, f.cwe) for f in label_findings(code)} >= {(3, 78), (4, 328)}



@pytest.mark.parametrize("module", ["labels", "taint", "rules", "findings", "mutations", "steps"])
def test_docstring_examples_of_the_analyser_modules_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"engines.codeprm.{module}"))
    assert result.attempted > 0 and result.failed == 0
