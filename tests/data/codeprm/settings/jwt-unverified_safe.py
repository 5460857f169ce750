import jwt

SECRET = "loaded-from-the-environment"


def current_user(token):
    claims = jwt.decode(token, SECRET, algorithms=["HS256"])
    return claims["sub"]
