from django.http import HttpResponse
from django.template import Context, Template as DjangoTemplate
from flask import Flask, render_template_string, request
from jinja2 import Environment, Template
from mako.template import Template as MakoTemplate

app = Flask(__name__)
env = Environment()


@app.route("/hello")
def hello():
    name = request.args.get("name", "world")
    page = f"<h1>Hello {name}</h1>"
    return render_template_string(page)  # expect


@app.route("/greet")
def greet():
    tpl = Template("Hi " + request.args["who"])  # expect
    other = env.from_string(request.form["body"])  # expect
    mako = MakoTemplate(request.args["m"])  # expect
    return tpl.render() + other.render() + mako.render()


def django_view(request):
    source = "<p>%s</p>" % request.GET.get("msg", "")
    return HttpResponse(DjangoTemplate(source).render(Context({})))  # expect
