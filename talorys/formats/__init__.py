"""Django's format modules (FORMAT_MODULE_PATH): the admin shows times as the pages do."""
