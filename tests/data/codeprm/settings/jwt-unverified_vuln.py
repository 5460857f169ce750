import jwt


def current_user(token):
    claims = jwt.decode(token, options={"verify_signature": False})  # expect
    legacy = jwt.decode(token, "secret", verify=False)  # expect
    anyalg = jwt.decode(token, "secret", algorithms=["none"])  # expect
    return claims["sub"], legacy, anyalg
