DEBUG = False
ALLOWED_HOSTS = ["www.example.com", "example.com"]
