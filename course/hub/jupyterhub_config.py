"""JupyterHub's configuration for the course (`jupyterhub -f` this file; course.hub.serve starts it).

Everything particular to one start (ports, the build area, the accounts) comes from the settings file that
course.hub.serve writes, named by COURSE_HUB_SETTINGS.
"""

import json
import os
from pathlib import Path

c = get_config()  # noqa: F821 (provided by JupyterHub)
settings = json.loads(Path(os.environ["COURSE_HUB_SETTINGS"]).read_text())
state = Path(settings["state"])

# Everything on this machine's loopback: the public proxy, its API and the hub's own API on three ports.
port = settings["port"]
c.JupyterHub.bind_url = f"http://127.0.0.1:{port}"
# Each user's server on a host of its own (<user>.localhost, which browsers send to the loopback): a script a student's
# server serves cannot act in the instructor's pages or a classmate's, as it could on one shared origin.
c.JupyterHub.subdomain_host = settings["public_url"]
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{port + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{port + 2}"
c.ConfigurableHTTPProxy.command = [settings["proxy"]]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True  # stopping the hub stops every server it started

c.JupyterHub.authenticator_class = "course.hub.classes.CoursePasswords"
c.CoursePasswords.passwords_file = str(state / "passwords.json")
c.Authenticator.admin_users = {settings["instructor"]}

c.JupyterHub.spawner_class = "course.hub.classes.CourseSpawner"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = c.Spawner.http_timeout = 120
c.CourseSpawner.server_command = [str(Path(settings["venv"]) / "bin" / "jupyterhub-singleuser")]
c.CourseSpawner.instructor = settings["instructor"]
c.CourseSpawner.owner = settings["owner"]
c.CourseSpawner.course_dir = settings["course"]
c.CourseSpawner.repository = settings["repository"]
c.CourseSpawner.instructor_environment = settings["instructor_environment"]
c.CourseSpawner.student_environment = settings["student_environment"]
c.CourseSpawner.shared_paths = settings["shared_with_students"]
c.CourseSpawner.student_file_mb = settings["student_file_mb"]
c.CourseSpawner.student_processes = settings["student_processes"]
c.CourseSpawner.student_memory_mb = settings["student_memory_mb"]

if settings.get("service_token"):  # the tests' driver: start and stop servers without a browser
    c.JupyterHub.services = [{"name": "course-tests", "api_token": settings["service_token"]}]
    c.JupyterHub.load_roles = [{"name": "course-tests", "services": ["course-tests"],
                                "scopes": ["list:users", "read:users", "admin:servers", "access:servers"]}]
