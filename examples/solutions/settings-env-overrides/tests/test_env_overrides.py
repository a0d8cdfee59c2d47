"""Environment overrides: precedence, coercion and errors."""

import pytest
from appconfig import ConfigError, load_settings


def test_environment_beats_file(tmp_path):
    path = tmp_path / "settings.toml"
    path.write_text("[app]\nworkers = 8\n")
    assert load_settings(path, environ={"APP_WORKERS": "3"}).workers == 3


def test_string_settings_are_taken_verbatim():
    url = "postgresql://app@db/app?sslmode=require"
    assert load_settings(environ={"APP_DATABASE_URL": url}).database_url == url


def test_float_setting_accepts_integers():
    assert load_settings(environ={"APP_REQUEST_TIMEOUT": "10"}).request_timeout == 10.0


@pytest.mark.parametrize("raw", ["maybe", ""])
def test_unrecognised_boolean_is_an_error(raw):
    with pytest.raises(ConfigError, match="APP_DEBUG"):
        load_settings(environ={"APP_DEBUG": raw})


def test_process_environment_is_the_default(monkeypatch):
    monkeypatch.setenv("APP_PORT", "8123")
    assert load_settings().port == 8123
