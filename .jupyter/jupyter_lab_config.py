# The project's JupyterLab settings, used by `make lab` (JUPYTER_CONFIG_DIR=.jupyter) and the browser tests;
# nothing is read from or written to the user's home directory.
from pathlib import Path

here = Path(__file__).resolve().parent
c = get_config()  # noqa: F821 - provided by the config loader
# overrides.json: notebooks/*.py open as notebooks (jupytext), with the default kernel started for them
c.LabApp.app_settings_dir = str(here / "lab" / "settings")
# settings a user changes in Lab, and workspaces, stay in the project (git-ignored)
c.LabApp.user_settings_dir = str(here / "lab" / "user-settings")
c.LabApp.workspaces_dir = str(here / "lab" / "workspaces")
# the repository root: notebooks/, data/ and reports/ are all one click away in the file browser
c.ServerApp.root_dir = str(here.parent)
c.ServerApp.open_browser = False
c.ServerApp.allow_root = True  # containers and CI run as root
# jupytext: .py notebooks are read and saved as text only (no paired .ipynb)
c.ServerApp.contents_manager_class = "jupytext.TextFileContentsManager"
