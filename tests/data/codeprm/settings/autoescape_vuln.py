from flask import Flask
from jinja2 import Environment, FileSystemLoader

app = Flask(__name__)
env = Environment(loader=FileSystemLoader("templates"), autoescape=False)  # expect
app.jinja_env.autoescape = False  # expect
