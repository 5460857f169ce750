from django.http import HttpResponse
from django.template import Context, Template as DjangoTemplate
from flask import Flask, render_template_string, request
from jinja2 import Environment

app = Flask(__name__)
env = Environment(autoescape=True)


@app.route("/hello")
def hello():
    name = request.args.get("name", "world")
    return render_template_string("<h1>Hello {{ name }}</h1>", name=name)


@app.route("/greet")
def greet():
    tpl = env.from_string("Hi {{ who }}")
    return tpl.render(who=request.args["who"])


def django_view(request):
    tpl = DjangoTemplate("<p>{{ msg }}</p>")
    return HttpResponse(tpl.render(Context({"msg": request.GET.get("msg", "")})))
