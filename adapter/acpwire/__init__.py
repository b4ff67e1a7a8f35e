"""acpwire"""
