from django.http import HttpResponse

SESSION_COOKIE_SECURE = False  # expect


def view(request):
    response = HttpResponse("ok")
    response.set_cookie("sessionid", "abc", secure=False)  # expect
    return response
