from django.http import HttpResponse

SESSION_COOKIE_SECURE = True


def view(request):
    response = HttpResponse("ok")
    response.set_cookie("sessionid", "abc", secure=True, httponly=True)
    return response
