from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from flask import Flask
from flask_cors import CORS

app = Flask(__name__)
CORS(app, origins=["https://app.example.com"], supports_credentials=True)

api = FastAPI()
api.add_middleware(CORSMiddleware, allow_origins=["https://app.example.com"], allow_credentials=True)
api.add_middleware(CORSMiddleware, allow_origins=["*"], allow_credentials=False)

CORS_ALLOWED_ORIGINS = ["https://app.example.com"]
CORS_ALLOW_CREDENTIALS = True
