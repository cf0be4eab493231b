"""Every setting of the plugin and the argparse ``type=`` validators shared with the CLI."""
