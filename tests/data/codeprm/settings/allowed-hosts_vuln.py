DEBUG = False
ALLOWED_HOSTS = ["*"]  # expect
