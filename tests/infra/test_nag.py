"""cdk-nag helpers: finding ids must match cdk-nag's own flattening exactly."""

from __future__ import annotations

from infra.nag import flatten_cfn_reference


def test_flatten_matches_cdk_nag_format() -> None:
    arn = {
        "Fn::Join": [
            "",
            ["arn:", {"Ref": "AWS::Partition"}, ":execute-api:", {"Fn::GetAtt": ["Api", "Arn"]}, "/*"],
        ]
    }
    assert flatten_cfn_reference(arn) == "arn:<AWS::Partition>:execute-api:<Api.Arn>/*"
    assert flatten_cfn_reference({"Fn::Sub": "arn:${AWS::Region}:x"}) == "arn:<AWS::Region>:x"
