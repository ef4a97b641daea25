from sendledger_client.cli import main

main()
