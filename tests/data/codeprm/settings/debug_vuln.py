from flask import Flask

app = Flask(__name__)
app.debug = True  # expect
DEBUG = True  # expect

if __name__ == "__main__":
    app.run(host="0.0.0.0", debug=True)  # expect
