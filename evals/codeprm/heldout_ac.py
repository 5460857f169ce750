'''Blind template variants "ac" and "ad": two fresh TEST variants, for evaluation only.

Status: the blind test of the round-9 system, evaluated once (2026-12-01 13:35 UTC); validation data
since round 10 (benchmarks/codeprm_select.py only).

Written blind on 2026-12-01 by an independent author who did not see the detector's code
(nor its labels, rules, findings, models, data builders, scripts, assets or benchmark
results), and before any model or analyser was run on them. Each of the 13 CWE families gets
two vulnerable/fixed pairs, one per variant, in APIs, call patterns, data flows, fixes and code
shapes that differ from every earlier variant
(a/b/c/d/v/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/w/x/y/z/aa/ab). 26 pairs in all.

Evaluation only: never train, calibrate, select or tune on this module. It lives OUTSIDE
``mutations.TEMPLATES``, so ``mutations.templates()`` cannot return it, and no file in
scripts/ or benchmarks/ other than the evaluation harness may mention it.

Same format as mutations.py: ``#!V`` marks vulnerable lines; ``{f}``, ``{v}``, ``{t}`` are
filled by ``mutations.render``; imports are ``.format``-ed too (braces doubled).
'''
from __future__ import annotations

from evals.codeprm.mutations import Template, _t

VARIANTS = ("ac", "ad")

TEMPLATES_AC: list[Template] = [
    # ---- CWE-22 path traversal
    _t(22, "ac", "from pathlib import Path\nfrom pyramid.httpexceptions import HTTPBadRequest, HTTPNotFound\nfrom pyramid.view import view_config\n\nSHARE_ROOT = Path(\"/srv/{t}/team-share\")", """
@view_config(route_name="{t}_share_browse", renderer="json", permission="view")
def {f}(request):
    \"\"\"Folder pane of the team-share browser; ``?dir=`` is the folder path the user clicked in the tree (e.g. ``design/2026``).\"\"\"
    {v} = request.params.get("dir", "")
    folder = SHARE_ROOT / {v}.strip("/")
    if not folder.is_dir():
        raise HTTPNotFound()
    entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))  #!V
    return [
        {{"name": p.name, "folder": p.is_dir(), "size": p.stat().st_size, "modified": int(p.stat().st_mtime)}}
        for p in entries
    ]
""", """
@view_config(route_name="{t}_share_browse", renderer="json", permission="view")
def {f}(request):
    \"\"\"Folder pane of the team-share browser; ``?dir=`` is the folder path the user clicked in the tree (e.g. ``design/2026``).\"\"\"
    {v} = request.params.get("dir", "")
    root = SHARE_ROOT.resolve()
    folder = (root / {v}.strip("/")).resolve()
    if not folder.is_relative_to(root):
        raise HTTPBadRequest("folder is outside the share")
    if not folder.is_dir():
        raise HTTPNotFound()
    entries = sorted(folder.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
    return [
        {{"name": p.name, "folder": p.is_dir(), "size": p.stat().st_size, "modified": int(p.stat().st_mtime)}}
        for p in entries
    ]
"""),
    _t(22, "ad", "import os\nimport cherrypy\nfrom cherrypy.lib.static import serve_file\n\nEXPORT_DIR = \"/var/lib/{t}/exports\"", """
class {f}ExportDownloads:
    \"\"\"Mounted at ``/exports``; the links in the "your export is ready" e-mail look like ``/exports/download?file=2026-11-30-orders.csv``.\"\"\"

    @cherrypy.expose
    @cherrypy.tools.allow(methods=["GET"])
    def download(self, file: str = ""):
        {v} = "%s/%s" % (EXPORT_DIR, file)
        if not os.path.isfile({v}):
            raise cherrypy.NotFound()
        return serve_file({v}, content_type="text/csv", disposition="attachment", name=os.path.basename({v}))  #!V
""", """
class {f}ExportDownloads:
    \"\"\"Mounted at ``/exports``; the links in the "your export is ready" e-mail look like ``/exports/download?file=2026-11-30-orders.csv``.\"\"\"

    @cherrypy.expose
    @cherrypy.tools.allow(methods=["GET"])
    def download(self, file: str = ""):
        if file not in set(os.listdir(EXPORT_DIR)):
            raise cherrypy.NotFound()
        {v} = "%s/%s" % (EXPORT_DIR, file)
        if not os.path.isfile({v}):
            raise cherrypy.NotFound()
        return serve_file({v}, content_type="text/csv", disposition="attachment", name=os.path.basename({v}))
"""),
    # ---- CWE-78 OS command injection
    _t(78, "ac", "import re\nfrom dataclasses import dataclass\nimport psutil", """
@dataclass
class {f}ThumbnailJob:
    \"\"\"A job from the image-upload queue: ``source`` is the stored upload, ``size`` the geometry the client asked for (``?size=320x240``).\"\"\"
    source: str
    size: str
    out_dir: str = "/srv/{t}/thumbs"

    def start(self) -> psutil.Popen:
        \"\"\"Starts vipsthumbnail and returns the process, so the worker can watch its memory and kill it if it runs away.\"\"\"
        {v} = "vipsthumbnail {{}} --size {{}} -o {{}}/%s.webp".format(self.source, self.size, self.out_dir)  #!V
        return psutil.Popen({v}, shell=True)  #!V
""", """
@dataclass
class {f}ThumbnailJob:
    \"\"\"A job from the image-upload queue: ``source`` is the stored upload, ``size`` the geometry the client asked for (``?size=320x240``).\"\"\"
    source: str
    size: str
    out_dir: str = "/srv/{t}/thumbs"

    def start(self) -> psutil.Popen:
        \"\"\"Starts vipsthumbnail and returns the process, so the worker can watch its memory and kill it if it runs away.\"\"\"
        if not re.fullmatch(r"[0-9]{{1,4}}x[0-9]{{1,4}}", self.size):
            raise ValueError("size must look like 320x240")
        {v} = ["vipsthumbnail", "--size", self.size, "-o", f"{{self.out_dir}}/%s.webp", "--", self.source]
        return psutil.Popen({v})
"""),
    _t(78, "ad", "import re\nimport ansible_runner\nfrom flask import Blueprint, abort, jsonify, request\n\nops_console = Blueprint(\"ops_console\", __name__)\nANSIBLE_DIR = \"/var/lib/{t}/ansible\"\nHOST_GROUPS = (\"web\", \"workers\", \"scheduler\")", """
@ops_console.post("/ops/restart-service")
def {f}():
    \"\"\"On-call console, "Restart service" form: the engineer picks a host group and types the systemd unit to restart.\"\"\"
    form = request.get_json(force=True)
    group, {v} = form.get("group"), str(form.get("unit", ""))
    if group not in HOST_GROUPS or not {v}:
        abort(400)
    outcome = ansible_runner.run(
        private_data_dir=ANSIBLE_DIR,
        host_pattern=group,
        module="ansible.builtin.shell",
        module_args="systemctl restart %s && systemctl is-active %s" % ({v}, {v}),  #!V
        quiet=True,
    )
    return jsonify(status=outcome.status, rc=outcome.rc)
""", """
@ops_console.post("/ops/restart-service")
def {f}():
    \"\"\"On-call console, "Restart service" form: the engineer picks a host group and types the systemd unit to restart.\"\"\"
    form = request.get_json(force=True)
    group, {v} = form.get("group"), str(form.get("unit", ""))
    if group not in HOST_GROUPS or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9@._-]{{0,127}}", {v}):
        abort(400)
    outcome = ansible_runner.run(
        private_data_dir=ANSIBLE_DIR,
        host_pattern=group,
        module="ansible.builtin.systemd",
        module_args=f"name={{{v}}} state=restarted",
        quiet=True,
    )
    return jsonify(status=outcome.status, rc=outcome.rc)
"""),
    # ---- CWE-79 XSS
    _t(79, "ac", "import json\nfrom yattag import Doc", """
def {f}(pulls_json: str, out_path: str) -> None:
    \"\"\"Release pipeline step: turns the merged pull requests (``gh pr list --json``) into the release-notes page of the docs site; titles and logins are whatever the contributors typed.\"\"\"
    with open(pulls_json, encoding="utf-8") as fh:
        {v} = json.load(fh)
    doc, tag, txt = Doc().tagtext()
    doc.asis("<!doctype html>")
    with tag("html"):
        with tag("body"):
            with tag("h1"):
                txt("Changes in this release")
            with tag("ul", klass="changes"):
                for pr in {v}:
                    with tag("li"):
                        doc.asis(f"<a href='{{pr['url']}}'>#{{pr['number']}}</a> {{pr['title']}} <em>by {{pr['author']['login']}}</em>")  #!V
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(doc.getvalue())
""", """
def {f}(pulls_json: str, out_path: str) -> None:
    \"\"\"Release pipeline step: turns the merged pull requests (``gh pr list --json``) into the release-notes page of the docs site; titles and logins are whatever the contributors typed.\"\"\"
    with open(pulls_json, encoding="utf-8") as fh:
        {v} = json.load(fh)
    doc, tag, txt = Doc().tagtext()
    doc.asis("<!doctype html>")
    with tag("html"):
        with tag("body"):
            with tag("h1"):
                txt("Changes in this release")
            with tag("ul", klass="changes"):
                for pr in {v}:
                    with tag("li"):
                        with tag("a", href=pr["url"]):
                            txt(f"#{{pr['number']}}")
                        txt(" " + pr["title"] + " ")
                        with tag("em"):
                            txt("by " + pr["author"]["login"])
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(doc.getvalue())
"""),
    _t(79, "ad", "from flask_login import current_user\nfrom flask_socketio import SocketIO, emit\nfrom markdown_it import MarkdownIt\n\nsocketio = SocketIO()", """
chat_markdown = MarkdownIt("commonmark", {{"breaks": True}})  #!V


@socketio.on("chat:send")
def {f}({v}: dict) -> None:
    \"\"\"Team chat: a member sends a message from the composer; every browser in the room inserts the pushed ``html`` into its timeline.\"\"\"
    room = str({v}["room"])
    if room not in current_user.room_ids:
        return
    emit("chat:message", {{"room": room, "author": current_user.display_name, "html": chat_markdown.render(str({v}["body"]))}}, to=room)  #!V
""", """
chat_markdown = MarkdownIt("commonmark", {{"breaks": True, "html": False}})


@socketio.on("chat:send")
def {f}({v}: dict) -> None:
    \"\"\"Team chat: a member sends a message from the composer; every browser in the room inserts the pushed ``html`` into its timeline.\"\"\"
    room = str({v}["room"])
    if room not in current_user.room_ids:
        return
    emit("chat:message", {{"room": room, "author": current_user.display_name, "html": chat_markdown.render(str({v}["body"]))}}, to=room)
"""),
    # ---- CWE-89 SQL injection
    _t(89, "ac", "from datetime import datetime, timedelta, timezone\nfrom tortoise import connections", """
class {f}AuditLog:
    \"\"\"Read side of the admin "Audit log" screen; ``actor`` and the action filter come from the search boxes above the table.\"\"\"

    def __init__(self, alias: str = "default"):
        self.alias = alias

    async def search(self, actor: str, {v}: str, days: int = 7) -> list[dict]:
        since = datetime.now(timezone.utc) - timedelta(days=int(days))
        sql = (
            "SELECT id, actor, action, ip, created_at FROM {t}_audit "
            f"WHERE actor = '{{actor}}' AND action = '{{{v}}}' AND created_at >= '{{since.isoformat()}}' "  #!V
            "ORDER BY created_at DESC LIMIT 200"
        )
        return await connections.get(self.alias).execute_query_dict(sql)  #!V
""", """
class {f}AuditLog:
    \"\"\"Read side of the admin "Audit log" screen; ``actor`` and the action filter come from the search boxes above the table.\"\"\"

    def __init__(self, alias: str = "default"):
        self.alias = alias

    async def search(self, actor: str, {v}: str, days: int = 7) -> list[dict]:
        since = datetime.now(timezone.utc) - timedelta(days=int(days))
        sql = (
            "SELECT id, actor, action, ip, created_at FROM {t}_audit "
            "WHERE actor = $1 AND action = $2 AND created_at >= $3 "
            "ORDER BY created_at DESC LIMIT 200"
        )
        return await connections.get(self.alias).execute_query_dict(sql, [actor, {v}, since])
"""),
    _t(89, "ad", "import csv\nimport dataset\n\nstock_db = dataset.connect(\"postgresql:///{t}_warehouse\")", """
def {f}(feed_path: str) -> list[dict]:
    \"\"\"Nightly reconciliation job; ``feed_path`` is the stock CSV a supplier uploaded to our SFTP drop, and we look up every SKU it lists.\"\"\"
    with open(feed_path, newline="", encoding="utf-8") as fh:
        {v} = sorted({{row["sku"].strip() for row in csv.DictReader(fh) if row.get("sku")}})
    if not {v}:
        return []
    wanted = ", ".join("'%s'" % sku for sku in {v})  #!V
    return [dict(r) for r in stock_db.query("SELECT sku, on_hand, reserved FROM {t}_stock WHERE sku IN (" + wanted + ")")]  #!V
""", """
def {f}(feed_path: str) -> list[dict]:
    \"\"\"Nightly reconciliation job; ``feed_path`` is the stock CSV a supplier uploaded to our SFTP drop, and we look up every SKU it lists.\"\"\"
    with open(feed_path, newline="", encoding="utf-8") as fh:
        {v} = sorted({{row["sku"].strip() for row in csv.DictReader(fh) if row.get("sku")}})
    if not {v}:
        return []
    stock = stock_db["{t}_stock"]
    return [{{"sku": r["sku"], "on_hand": r["on_hand"], "reserved": r["reserved"]}} for r in stock.find(sku={{"in": {v}}})]
"""),
    # ---- CWE-94 code injection
    _t(94, "ac", "from Cheetah.Template import Template as CheetahTemplate\nfrom .models import MachineProfile", """
def {f}(profile: MachineProfile, {v}: dict) -> str:
    \"\"\"Provisioning server: renders the kickstart file a booting machine downloads; ``profile.kickstart_template`` is what a tenant admin pasted into the profile editor, ``{v}`` is the machine's inventory record.\"\"\"
    namespace = {{
        "hostname": {v}["hostname"],
        "mac": {v}["mac"],
        "ip": {v}.get("ip", ""),
        "profile": profile.slug,
    }}
    return str(CheetahTemplate(profile.kickstart_template, searchList=[namespace]))  #!V
""", """
def {f}(profile: MachineProfile, {v}: dict) -> str:
    \"\"\"Provisioning server: renders the kickstart file a booting machine downloads; ``profile.kickstart_template`` is what a tenant admin pasted into the profile editor, ``{v}`` is the machine's inventory record.\"\"\"
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    namespace = {{
        "hostname": {v}["hostname"],
        "mac": {v}["mac"],
        "ip": {v}.get("ip", ""),
        "profile": profile.slug,
    }}
    env = ImmutableSandboxedEnvironment(keep_trailing_newline=True)
    return env.from_string(profile.kickstart_template).render(namespace)
"""),
    _t(94, "ad", "import graphene\nfrom .warehouse import load_rows", """
class {f}Query(graphene.ObjectType):
    \"\"\"Reporting API; ``formula`` is the calculated-column expression an analyst typed into the report builder, e.g. ``(revenue - cost) / revenue``.\"\"\"

    computed_column = graphene.List(graphene.Float, report=graphene.ID(required=True), formula=graphene.String(required=True))

    def resolve_computed_column(root, info, report, formula):
        {v} = load_rows(report, tenant_id=info.context.tenant_id)
        return [float(eval(formula, {{"__builtins__": {{}}}}, dict(row))) for row in {v}]  #!V
""", """
class {f}Query(graphene.ObjectType):
    \"\"\"Reporting API; ``formula`` is the calculated-column expression an analyst typed into the report builder, e.g. ``(revenue - cost) / revenue``.\"\"\"

    computed_column = graphene.List(graphene.Float, report=graphene.ID(required=True), formula=graphene.String(required=True))

    def resolve_computed_column(root, info, report, formula):
        from simpleeval import SimpleEval
        if len(formula) > 300:
            raise ValueError("formula is too long")
        {v} = load_rows(report, tenant_id=info.context.tenant_id)
        evaluator = SimpleEval(functions={{"abs": abs, "round": round, "min": min, "max": max}})
        values = []
        for row in {v}:
            evaluator.names = dict(row)
            values.append(float(evaluator.eval(formula)))
        return values
"""),
    # ---- CWE-502 unsafe deserialisation
    _t(502, "ac", "import os\nimport shelve\nimport tempfile\nimport tornado.web\nfrom .sync import merge_offline_changes", """
class {f}OfflineSyncHandler(tornado.web.RequestHandler):
    \"\"\"Field app, "Sync" button: the tablet uploads the local key/value store it kept while it had no signal (``store`` form field).\"\"\"

    @tornado.web.authenticated
    def post(self):
        upload = self.request.files["store"][0]
        with tempfile.TemporaryDirectory(prefix="{t}-sync-") as workdir:
            store_path = os.path.join(workdir, "offline.db")
            with open(store_path, "wb") as out:
                out.write(upload["body"])
            with shelve.open(store_path, flag="r") as {v}:  #!V
                changes = {{k: {v}[k] for k in {v}.keys()}}
        merged = merge_offline_changes(self.current_user, changes)
        self.write({{"merged": merged}})
""", """
class {f}OfflineSyncHandler(tornado.web.RequestHandler):
    \"\"\"Field app, "Sync" button: the tablet uploads the local key/value store it kept while it had no signal (``store`` form field).\"\"\"

    @tornado.web.authenticated
    def post(self):
        import dbm
        import json
        upload = self.request.files["store"][0]
        with tempfile.TemporaryDirectory(prefix="{t}-sync-") as workdir:
            store_path = os.path.join(workdir, "offline.db")
            with open(store_path, "wb") as out:
                out.write(upload["body"])
            try:
                with dbm.open(store_path, "r") as {v}:
                    changes = {{k.decode("utf-8"): json.loads({v}[k]) for k in {v}.keys()}}
            except (*dbm.error, UnicodeDecodeError, ValueError):
                raise tornado.web.HTTPError(400, "unreadable offline store")
        merged = merge_offline_changes(self.current_user, changes)
        self.write({{"merged": merged}})
"""),
    _t(502, "ad", "import zmq\nfrom .metrics import record_points", """
def {f}(bind: str = "tcp://0.0.0.0:5557") -> None:
    \"\"\"Collector of the fleet-metrics pipeline: the agents running on customers' edge boxes push their batches to this PULL socket.\"\"\"
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.PULL)
    sock.setsockopt(zmq.RCVHWM, 10_000)
    sock.bind(bind)
    while True:
        {v} = sock.recv_pyobj()  #!V
        points = [(str(p["metric"]), float(p["value"]), int(p["ts"])) for p in {v}["points"]]
        record_points(str({v}["agent_id"]), points)
""", """
def {f}(bind: str = "tcp://0.0.0.0:5557") -> None:
    \"\"\"Collector of the fleet-metrics pipeline: the agents running on customers' edge boxes push their batches to this PULL socket.\"\"\"
    import msgpack
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.PULL)
    sock.setsockopt(zmq.RCVHWM, 10_000)
    sock.setsockopt(zmq.MAXMSGSIZE, 4 * 1024 * 1024)
    sock.bind(bind)
    while True:
        try:
            {v} = msgpack.unpackb(sock.recv(), raw=False)
            points = [(str(p["metric"]), float(p["value"]), int(p["ts"])) for p in {v}["points"]]
            agent = str({v}["agent_id"])
        except (ValueError, KeyError, TypeError, msgpack.UnpackException):
            continue
        record_points(agent, points)
"""),
    # ---- CWE-327 broken / risky crypto
    _t(327, "ac", "from io import BytesIO\nfrom pypdf import PdfReader, PdfWriter\nfrom .storage import put_document", """
def {f}(employee_id: int, pdf_bytes: bytes, {v}: str) -> str:
    \"\"\"Payroll run: each payslip PDF is encrypted with the document password the employee set in the HR portal (``{v}``) before it is e-mailed.\"\"\"
    writer = PdfWriter(clone_from=PdfReader(BytesIO(pdf_bytes)))
    writer.encrypt(user_password={v}, owner_password=None, use_128bit=True)  #!V
    sealed = BytesIO()
    writer.write(sealed)
    return put_document(f"payslips/{{employee_id}}.pdf", sealed.getvalue())
""", """
def {f}(employee_id: int, pdf_bytes: bytes, {v}: str) -> str:
    \"\"\"Payroll run: each payslip PDF is encrypted with the document password the employee set in the HR portal (``{v}``) before it is e-mailed.\"\"\"
    writer = PdfWriter(clone_from=PdfReader(BytesIO(pdf_bytes)))
    writer.encrypt(user_password={v}, owner_password=None, algorithm="AES-256")
    sealed = BytesIO()
    writer.write(sealed)
    return put_document(f"payslips/{{employee_id}}.pdf", sealed.getvalue())
"""),
    _t(327, "ad", "import os\nfrom pysnmp import hlapi", """
def {f}({v}: str) -> dict:
    \"\"\"Inventory poller: reads sysDescr and sysUpTime from a switch the network team registered; ``{v}`` is its management address.\"\"\"
    credentials = hlapi.UsmUserData(
        "{t}-poller",
        authKey=os.environ["SNMP_AUTH_KEY"],
        privKey=os.environ["SNMP_PRIV_KEY"],
        authProtocol=hlapi.usmHMAC192SHA256AuthProtocol,
        privProtocol=hlapi.usmDESPrivProtocol,  #!V
    )
    error_indication, error_status, _error_index, var_binds = next(hlapi.getCmd(
        hlapi.SnmpEngine(),
        credentials,
        hlapi.UdpTransportTarget(({v}, 161), timeout=2, retries=1),
        hlapi.ContextData(),
        hlapi.ObjectType(hlapi.ObjectIdentity("SNMPv2-MIB", "sysDescr", 0)),
        hlapi.ObjectType(hlapi.ObjectIdentity("SNMPv2-MIB", "sysUpTime", 0)),
    ))
    if error_indication or error_status:
        raise RuntimeError(str(error_indication or error_status.prettyPrint()))
    return {{oid.prettyPrint(): val.prettyPrint() for oid, val in var_binds}}
""", """
def {f}({v}: str) -> dict:
    \"\"\"Inventory poller: reads sysDescr and sysUpTime from a switch the network team registered; ``{v}`` is its management address.\"\"\"
    credentials = hlapi.UsmUserData(
        "{t}-poller",
        authKey=os.environ["SNMP_AUTH_KEY"],
        privKey=os.environ["SNMP_PRIV_KEY"],
        authProtocol=hlapi.usmHMAC192SHA256AuthProtocol,
        privProtocol=hlapi.usmAesCfb128Protocol,
    )
    error_indication, error_status, _error_index, var_binds = next(hlapi.getCmd(
        hlapi.SnmpEngine(),
        credentials,
        hlapi.UdpTransportTarget(({v}, 161), timeout=2, retries=1),
        hlapi.ContextData(),
        hlapi.ObjectType(hlapi.ObjectIdentity("SNMPv2-MIB", "sysDescr", 0)),
        hlapi.ObjectType(hlapi.ObjectIdentity("SNMPv2-MIB", "sysUpTime", 0)),
    ))
    if error_indication or error_status:
        raise RuntimeError(str(error_indication or error_status.prettyPrint()))
    return {{oid.prettyPrint(): val.prettyPrint() for oid, val in var_binds}}
"""),
    # ---- CWE-328 weak hash
    _t(328, "ac", "import os\nimport ldap3\nfrom ldap3.utils.dn import escape_rdn\nfrom ldap3.utils.hashed import hashed\n\nLDAP_URL = \"ldaps://ldap.{t}.internal\"\nSERVICE_DN = \"cn=password-service,ou=services,dc={t},dc=internal\"", """
def {f}(uid: str, {v}: str) -> None:
    \"\"\"Self-service "Change password" page of the intranet; ``{v}`` is the new password the employee typed (the old one was checked before).\"\"\"
    server = ldap3.Server(LDAP_URL, use_ssl=True, get_info=ldap3.NONE)
    with ldap3.Connection(server, SERVICE_DN, os.environ["LDAP_SERVICE_PASSWORD"], auto_bind=True) as conn:
        user_dn = f"uid={{escape_rdn(uid)}},ou=people,dc={t},dc=internal"
        new_hash = hashed(ldap3.HASHED_SALTED_MD5, {v})  #!V
        conn.modify(user_dn, {{"userPassword": [(ldap3.MODIFY_REPLACE, [new_hash])]}})
        if conn.result["result"] != 0:
            raise RuntimeError(conn.result["description"])
""", """
def {f}(uid: str, {v}: str) -> None:
    \"\"\"Self-service "Change password" page of the intranet; ``{v}`` is the new password the employee typed (the old one was checked before).\"\"\"
    from passlib.hash import sha512_crypt
    server = ldap3.Server(LDAP_URL, use_ssl=True, get_info=ldap3.NONE)
    with ldap3.Connection(server, SERVICE_DN, os.environ["LDAP_SERVICE_PASSWORD"], auto_bind=True) as conn:
        user_dn = f"uid={{escape_rdn(uid)}},ou=people,dc={t},dc=internal"
        new_hash = "{{CRYPT}}" + sha512_crypt.hash({v})
        conn.modify(user_dn, {{"userPassword": [(ldap3.MODIFY_REPLACE, [new_hash])]}})
        if conn.result["result"] != 0:
            raise RuntimeError(conn.result["description"])
"""),
    _t(328, "ad", "import hashlib\nfrom itsdangerous import BadSignature, URLSafeTimedSerializer", """
class {f}EmailChangeLinks:
    \"\"\"Confirmation links for "change my e-mail address"; ``{v}`` is the new address the user typed, the token comes back when they click the link.\"\"\"

    def __init__(self, secret_key: str):
        self.signer = URLSafeTimedSerializer(secret_key, salt="{t}-email-change", signer_kwargs={{"digest_method": hashlib.md5}})  #!V

    def issue(self, user_id: int, {v}: str) -> str:
        return self.signer.dumps({{"uid": user_id, "email": {v}}})

    def confirm(self, token: str, max_age: int = 86400) -> dict | None:
        try:
            return self.signer.loads(token, max_age=max_age)
        except BadSignature:
            return None
""", """
class {f}EmailChangeLinks:
    \"\"\"Confirmation links for "change my e-mail address"; ``{v}`` is the new address the user typed, the token comes back when they click the link.\"\"\"

    def __init__(self, secret_key: str):
        self.signer = URLSafeTimedSerializer(secret_key, salt="{t}-email-change", signer_kwargs={{"digest_method": hashlib.sha256}})

    def issue(self, user_id: int, {v}: str) -> str:
        return self.signer.dumps({{"uid": user_id, "email": {v}}})

    def confirm(self, token: str, max_age: int = 86400) -> dict | None:
        try:
            return self.signer.loads(token, max_age=max_age)
        except BadSignature:
            return None
"""),
    # ---- CWE-338 weak PRNG for security
    _t(338, "ac", "import asyncio\nimport hashlib\nimport hmac\nimport random\nfrom .devices import device_secret", """
class {f}DeviceAuthProtocol(asyncio.Protocol):
    \"\"\"Door-controller gateway: every controller that connects must answer a fresh challenge with HMAC-SHA256(device secret, challenge).\"\"\"

    def connection_made(self, transport):
        self.transport = transport
        self.challenge = random.randbytes(16)  #!V
        transport.write(b"CHALLENGE " + self.challenge.hex().encode() + b"\\n")

    def data_received(self, {v}: bytes):
        device_id, _, answer = {v}.strip().decode("ascii", "replace").partition(" ")
        expected = hmac.new(device_secret(device_id), self.challenge, hashlib.sha256).hexdigest()
        if hmac.compare_digest(answer.encode(), expected.encode()):
            self.transport.write(b"OK\\n")
        else:
            self.transport.write(b"DENIED\\n")
            self.transport.close()
""", """
class {f}DeviceAuthProtocol(asyncio.Protocol):
    \"\"\"Door-controller gateway: every controller that connects must answer a fresh challenge with HMAC-SHA256(device secret, challenge).\"\"\"

    def connection_made(self, transport):
        import os
        self.transport = transport
        self.challenge = os.urandom(16)
        transport.write(b"CHALLENGE " + self.challenge.hex().encode() + b"\\n")

    def data_received(self, {v}: bytes):
        device_id, _, answer = {v}.strip().decode("ascii", "replace").partition(" ")
        expected = hmac.new(device_secret(device_id), self.challenge, hashlib.sha256).hexdigest()
        if hmac.compare_digest(answer.encode(), expected.encode()):
            self.transport.write(b"OK\\n")
        else:
            self.transport.write(b"DENIED\\n")
            self.transport.close()
"""),
    _t(338, "ad", "from coolname import generate_slug\nfrom django.db import models", """
class {f}Room(models.Model):
    \"\"\"Video-meeting rooms: anyone who has the room link ``/r/<slug>`` can join without an account, so the slug is the room's only secret.\"\"\"
    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=120, unique=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = generate_slug(3)  #!V
        super().save(*args, **kwargs)

    def invite_link(self, {v}: str = "https://meet.{t}.example") -> str:
        return f"{{{v}}}/r/{{self.slug}}"
""", """
class {f}Room(models.Model):
    \"\"\"Video-meeting rooms: anyone who has the room link ``/r/<slug>`` can join without an account, so the slug is the room's only secret.\"\"\"
    title = models.CharField(max_length=200)
    slug = models.SlugField(max_length=120, unique=True, editable=False)
    created = models.DateTimeField(auto_now_add=True)

    def save(self, *args, **kwargs):
        if not self.slug:
            import secrets
            self.slug = f"{{generate_slug(2)}}-{{secrets.token_urlsafe(16)}}"
        super().save(*args, **kwargs)

    def invite_link(self, {v}: str = "https://meet.{t}.example") -> str:
        return f"{{{v}}}/r/{{self.slug}}"
"""),
    # ---- CWE-377 insecure temporary file
    _t(377, "ac", "import os\nfrom weasyprint import HTML\nfrom .mail import send_with_attachment", """
def {f}(invoice, {v}: str) -> None:
    \"\"\"Billing worker on the shared batch host: renders an invoice to PDF and e-mails it; ``{v}`` is the invoice HTML from the billing template.\"\"\"
    scratch = os.environ.get("TMPDIR", "/tmp")
    pdf_path = os.path.join(scratch, "invoice-%s.pdf" % invoice.number)  #!V
    HTML(string={v}, base_url="https://billing.{t}.example/").write_pdf(pdf_path)  #!V
    try:
        send_with_attachment(invoice.customer_email, "Your invoice %s" % invoice.number, pdf_path)
    finally:
        os.remove(pdf_path)
""", """
def {f}(invoice, {v}: str) -> None:
    \"\"\"Billing worker on the shared batch host: renders an invoice to PDF and e-mails it; ``{v}`` is the invoice HTML from the billing template.\"\"\"
    import tempfile
    with tempfile.TemporaryDirectory(prefix="{t}-invoice-") as scratch:
        pdf_path = os.path.join(scratch, "invoice-%s.pdf" % invoice.number)
        HTML(string={v}, base_url="https://billing.{t}.example/").write_pdf(pdf_path)
        send_with_attachment(invoice.customer_email, "Your invoice %s" % invoice.number, pdf_path)
"""),
    _t(377, "ad", "import os\nimport cv2\nfrom .storage import upload_clip", """
def {f}(camera_id: int, frames: list, fps: float = 12.0) -> str:
    \"\"\"Motion-alert worker on the shared video-analytics host: writes the buffered frames around an alert to an MP4 clip and uploads it.\"\"\"
    height, width = frames[0].shape[:2]
    {v} = f"/tmp/{t}-cam{{camera_id}}-alert.mp4"  #!V
    writer = cv2.VideoWriter({v}, cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))  #!V
    try:
        for frame in frames:
            writer.write(frame)
    finally:
        writer.release()
    url = upload_clip(camera_id, {v})
    os.remove({v})
    return url
""", """
def {f}(camera_id: int, frames: list, fps: float = 12.0) -> str:
    \"\"\"Motion-alert worker on the shared video-analytics host: writes the buffered frames around an alert to an MP4 clip and uploads it.\"\"\"
    import tempfile
    height, width = frames[0].shape[:2]
    fd, {v} = tempfile.mkstemp(prefix=f"{t}-cam{{camera_id}}-", suffix=".mp4")
    os.close(fd)
    try:
        writer = cv2.VideoWriter({v}, cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
        try:
            for frame in frames:
                writer.write(frame)
        finally:
            writer.release()
        return upload_clip(camera_id, {v})
    finally:
        os.remove({v})
"""),
    # ---- CWE-611 XXE / external XML resources
    _t(611, "ac", "import xmlschema\nfrom django.http import JsonResponse\nfrom django.views.decorators.http import require_POST\nfrom .models import PartnerSchema", """
@require_POST
def {f}(request, partner_id: int):
    \"\"\"Integration settings: a partner uploads the XSD their order feed follows; we compile it and keep it to validate their feeds.\"\"\"
    {v} = request.FILES["schema"].read()
    try:
        schema = xmlschema.XMLSchema({v}.decode("utf-8"), allow="all", defuse="never")  #!V
    except (xmlschema.XMLSchemaException, ValueError) as exc:
        return JsonResponse({{"error": str(exc)}}, status=400)
    PartnerSchema.objects.update_or_create(partner_id=partner_id, defaults={{"source": {v}.decode("utf-8")}})
    return JsonResponse({{"target_namespace": schema.target_namespace, "elements": sorted(schema.elements)}})
""", """
@require_POST
def {f}(request, partner_id: int):
    \"\"\"Integration settings: a partner uploads the XSD their order feed follows; we compile it and keep it to validate their feeds.\"\"\"
    {v} = request.FILES["schema"].read()
    try:
        schema = xmlschema.XMLSchema({v}.decode("utf-8"), allow="none", defuse="always")
    except (xmlschema.XMLSchemaException, ValueError) as exc:
        return JsonResponse({{"error": str(exc)}}, status=400)
    PartnerSchema.objects.update_or_create(partner_id=partner_id, defaults={{"source": {v}.decode("utf-8")}})
    return JsonResponse({{"target_namespace": schema.target_namespace, "elements": sorted(schema.elements)}})
"""),
    _t(611, "ad", "from lxml import etree\nfrom . import feeds_pb2, feeds_pb2_grpc\nfrom .catalog import upsert_offers\n\nOFFER_TAG = \"{{urn:{t}:offers:1}}offer\"", """
class {f}FeedIngest(feeds_pb2_grpc.FeedIngestServicer):
    \"\"\"gRPC service merchants stream their offer feed to (client-streaming ``Upload``); the feeds start with a DOCTYPE naming the merchant's DTD.\"\"\"

    def Upload(self, request_iterator, context):
        parser = etree.XMLParser(load_dtd=True, no_network=False, huge_tree=True)  #!V
        for chunk in request_iterator:
            parser.feed(chunk.content)
        {v} = parser.close()
        accepted = upsert_offers(context.peer(), {v}.iter(OFFER_TAG))
        return feeds_pb2.UploadReply(accepted=accepted)
""", """
class {f}FeedIngest(feeds_pb2_grpc.FeedIngestServicer):
    \"\"\"gRPC service merchants stream their offer feed to (client-streaming ``Upload``); the feeds start with a DOCTYPE naming the merchant's DTD.\"\"\"

    def Upload(self, request_iterator, context):
        parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False, huge_tree=False)
        for chunk in request_iterator:
            parser.feed(chunk.content)
        {v} = parser.close()
        accepted = upsert_offers(context.peer(), {v}.iter(OFFER_TAG))
        return feeds_pb2.UploadReply(accepted=accepted)
"""),
    # ---- CWE-798 hard-coded credentials
    _t(798, "ac", "from minio import Minio", """
class {f}MediaStore:
    \"\"\"Object storage of the media pipeline: transcoded renditions go to the ``{t}-media`` bucket of the in-house MinIO cluster.\"\"\"

    endpoint = "minio.{t}.internal:9000"
    bucket = "{t}-media"

    def __init__(self):
        self.client = Minio(self.endpoint, access_key="media-pipeline", secret_key="q8Rk2vN7xLp4Tz9WmC3bHf6Y", secure=True)  #!V

    def put_rendition(self, {v}: str, local_path: str) -> str:
        self.client.fput_object(self.bucket, {v}, local_path, content_type="video/mp4")
        return f"s3://{{self.bucket}}/{{{v}}}"
""", """
class {f}MediaStore:
    \"\"\"Object storage of the media pipeline: transcoded renditions go to the ``{t}-media`` bucket of the in-house MinIO cluster.\"\"\"

    endpoint = "minio.{t}.internal:9000"
    bucket = "{t}-media"

    def __init__(self):
        from minio.credentials import EnvMinioProvider
        self.client = Minio(self.endpoint, credentials=EnvMinioProvider(), secure=True)

    def put_rendition(self, {v}: str, local_path: str) -> str:
        self.client.fput_object(self.bucket, {v}, local_path, content_type="video/mp4")
        return f"s3://{{self.bucket}}/{{{v}}}"
"""),
    _t(798, "ad", "import csv\nimport smbclient\n\nFILE_SERVER = \"fs01.{t}.corp\"", r'''
def {f}({v}: str) -> list[dict]:
    """Finance ETL: pulls the daily cost-centre export that the ERP drops on the Windows file share; ``{v}`` is the business date (``YYYY-MM-DD``)."""
    smbclient.register_session(FILE_SERVER, username="CORP\\svc-{t}-etl", password="Wint3r!Etl-{t}-2024")  #!V
    share_path = rf"\\{{FILE_SERVER}}\finance\exports\costcentres-{{{v}}}.csv"
    with smbclient.open_file(share_path, mode="r", encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))
''', r'''
def {f}({v}: str) -> list[dict]:
    """Finance ETL: pulls the daily cost-centre export that the ERP drops on the Windows file share; ``{v}`` is the business date (``YYYY-MM-DD``)."""
    import json
    import boto3
    secret = boto3.client("secretsmanager").get_secret_value(SecretId="{t}/etl/file-share")
    creds = json.loads(secret["SecretString"])
    smbclient.register_session(FILE_SERVER, username=creds["username"], password=creds["password"])
    share_path = rf"\\{{FILE_SERVER}}\finance\exports\costcentres-{{{v}}}.csv"
    with smbclient.open_file(share_path, mode="r", encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))
'''),
    # ---- CWE-918 SSRF
    _t(918, "ac", "import dramatiq\nimport imageio.v3 as iio\nfrom .media import store_image", """
@dramatiq.actor(max_retries=2, time_limit=60_000)
def {f}(product_id: int, {v}: str) -> None:
    \"\"\"The back office's "Import image from URL" button; ``{v}`` is the address the merchant pasted into the form.\"\"\"
    pixels = iio.imread({v})  #!V
    if pixels.ndim not in (2, 3):
        raise ValueError("not a picture")
    store_image(product_id, pixels)
""", """
@dramatiq.actor(max_retries=2, time_limit=60_000)
def {f}(product_id: int, {v}: str) -> None:
    \"\"\"The back office's "Import image from URL" button; ``{v}`` is the address the merchant pasted into the form.\"\"\"
    from urllib.parse import urlsplit
    import advocate
    if urlsplit({v}).scheme != "https":
        raise ValueError("only https image URLs can be imported")
    reply = advocate.get({v}, timeout=10)
    reply.raise_for_status()
    if len(reply.content) > 20 * 1024 * 1024:
        raise ValueError("image is too large")
    pixels = iio.imread(reply.content)
    if pixels.ndim not in (2, 3):
        raise ValueError("not a picture")
    store_image(product_id, pixels)
"""),
    _t(918, "ad", "from quart import Quart, jsonify, request\nfrom slack_sdk.webhook.async_client import AsyncWebhookClient\n\nalerts_app = Quart(__name__)", """
@alerts_app.post("/settings/notifications/test")
async def {f}():
    \"\"\"Alert settings: the workspace admin pastes their Slack incoming-webhook URL and clicks "Send test message".\"\"\"
    form = await request.get_json()
    {v} = form["webhook_url"]
    hook = AsyncWebhookClient({v}, timeout=10)  #!V
    reply = await hook.send(text=":white_check_mark: Test alert from {t} monitoring")  #!V
    return jsonify(ok=reply.status_code == 200, status=reply.status_code, body=reply.body[:200])
""", """
@alerts_app.post("/settings/notifications/test")
async def {f}():
    \"\"\"Alert settings: the workspace admin pastes their Slack incoming-webhook URL and clicks "Send test message".\"\"\"
    from urllib.parse import urlsplit
    form = await request.get_json()
    {v} = form["webhook_url"]
    parts = urlsplit({v})
    if parts.scheme != "https" or parts.hostname != "hooks.slack.com" or parts.port is not None or not parts.path.startswith("/services/"):
        return jsonify(ok=False, error="not a Slack incoming-webhook URL"), 400
    hook = AsyncWebhookClient(f"https://hooks.slack.com{{parts.path}}", timeout=10)
    reply = await hook.send(text=":white_check_mark: Test alert from {t} monitoring")
    return jsonify(ok=reply.status_code == 200, status=reply.status_code, body=reply.body[:200])
"""),
]

FAMILIES_AC = sorted({t.cwe for t in TEMPLATES_AC})


def heldout_templates_ac() -> list[Template]:
    """The 26 variant-"ac"/"ad" templates (final evaluation only).

    >>> len(heldout_templates_ac()), len(FAMILIES_AC), sorted({t.variant for t in heldout_templates_ac()})
    (26, 13, ['ac', 'ad'])
    """
    return list(TEMPLATES_AC)
